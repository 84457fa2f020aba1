"""What the environment API says about episodes: observations, rewards, termination.

Rewards, termination and truncation are :mod:`studio.episodes.rewards`'s, the
rules the step runner and the rollouts use too; this module only lays them out
as the API's JSON.
"""

from __future__ import annotations

from typing import Any

from studio.episodes.models import Episode, Step
from studio.episodes.rewards import Outcome, scenario_rules, step_outcome
from studio.worlds.models import Scenario


def initial_observation(episode: Episode) -> str:
    return str(episode.world_revision.spec.get("initial_observation", ""))


def step_info(step: Step, outcome: Outcome) -> dict[str, Any]:
    return {
        "episode_id": step.episode_id,
        "step": step.index,
        "status": step.status,
        "firings": step.firings,
        "verifiers": step.verifiers,
        "telemetry": step.telemetry,
        "success": outcome.reason,
        "error": step.error,
    }


def scenario_payload(scenario: Scenario) -> dict[str, Any]:
    rules = scenario_rules(scenario)
    return {
        "id": scenario.pk,
        "title": scenario.title,
        "project": scenario.project.slug,
        "domain": scenario.world.domain,
        "task": str(scenario.spec.get("task", "")),
        "max_steps": rules.max_steps,
        "model": f"scenario-{scenario.pk}",
    }


def env_payload(episode: Episode) -> dict[str, Any]:
    """GET /api/v1/envs/{id}: the episode's state and its latest observation."""
    last = episode.steps.filter(status="done").order_by("-index").first()
    rules = scenario_rules(episode.scenario)
    outcome = step_outcome(last, rules) if last is not None else None
    return {
        "id": episode.pk,
        "scenario": episode.scenario_id,
        "project": episode.project.slug,
        "domain": episode.domain,
        "seed": episode.seed,
        "status": episode.status,
        "source": episode.source,
        "steps": episode.steps.filter(status="done").count(),
        "observation": last.observation if last is not None else initial_observation(episode),
        "reward": outcome.reward if outcome else 0.0,
        "terminated": outcome.terminated if outcome else False,
        "truncated": outcome.truncated if outcome else False,
        "created_at": episode.created_at.isoformat(),
    }
