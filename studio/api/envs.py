"""What the environment API says about episodes: observations, rewards, termination.

Rewards come from the scenario's success criteria (``simulator.scenario``): the
first rule that matches the observation gives the reward and may terminate the
episode. An episode that reaches the scenario's ``max_steps`` without
terminating is *truncated* (Gymnasium's distinction). Rollouts use the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simulator.scenario import Scenario as ScenarioSpec
from simulator.scenario import ScenarioError, SuccessCriterion, evaluate_success
from studio.episodes.models import Episode, Step
from studio.worlds.models import Scenario

DEFAULT_MAX_STEPS = 30


@dataclass(frozen=True)
class Rules:
    criteria: tuple[SuccessCriterion, ...] = ()
    max_steps: int = DEFAULT_MAX_STEPS


def scenario_rules(scenario: Scenario | None) -> Rules:
    """The success criteria and step limit of a scenario (none: no reward, the default limit)."""
    if scenario is None:
        return Rules()
    try:
        spec = ScenarioSpec.from_dict({"title": scenario.title or "scenario", **scenario.spec})
    except (ScenarioError, KeyError, TypeError, ValueError):
        return Rules()
    return Rules(criteria=spec.success, max_steps=spec.max_steps)


@dataclass(frozen=True)
class Outcome:
    reward: float
    terminated: bool
    truncated: bool
    reason: str


def step_outcome(step: Step, rules: Rules) -> Outcome:
    """Reward, termination and truncation after ``step`` (stored values win when present)."""
    success = evaluate_success(rules.criteria, step.observation)
    reward = step.reward if step.reward is not None else success.reward
    terminated = bool(step.terminated or success.terminated)
    truncated = not terminated and step.index >= rules.max_steps
    return Outcome(reward, terminated, truncated, success.reason)


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
