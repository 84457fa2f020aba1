"""Rewards and termination: the one place that says how an episode is scored.

A scenario's success criteria (:mod:`simulator.scenario`) are tried in order on
a step's observation: the first that matches gives the reward and may end the
episode. An episode that reaches its step limit without terminating is
*truncated* (Gymnasium's distinction). The step runner stores each step's
reward and termination when it saves the step; the environment API and the
rollouts read them back through :func:`step_outcome`, so the three agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.scenario import Scenario as ScenarioSpec
from simulator.scenario import ScenarioError, SuccessCriterion, evaluate_success
from studio.episodes.models import Step
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
        # A stored spec that no longer validates scores nothing rather than failing steps.
        return Rules()
    return Rules(criteria=spec.success, max_steps=spec.max_steps)


@dataclass(frozen=True)
class Outcome:
    reward: float
    terminated: bool
    truncated: bool
    reason: str


def observation_outcome(rules: Rules, observation: str, *, index: int) -> Outcome:
    """The outcome of step ``index`` whose observation is ``observation``."""
    success = evaluate_success(rules.criteria, observation)
    truncated = not success.terminated and index >= rules.max_steps
    return Outcome(success.reward, success.terminated, truncated, success.reason)


def step_outcome(step: Step, rules: Rules) -> Outcome:
    """Reward, termination and truncation after ``step`` (stored values win when present)."""
    computed = observation_outcome(rules, step.observation, index=step.index)
    reward = step.reward if step.reward is not None else computed.reward
    terminated = bool(step.terminated or computed.terminated)
    truncated = not terminated and step.index >= rules.max_steps
    return Outcome(reward, terminated, truncated, computed.reason)
