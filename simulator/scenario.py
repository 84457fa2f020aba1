"""Scenarios: a task in a world, with perturbations, success criteria and a default agent.

A scenario is what a researcher curates and exports: it says what the agent must
do, how the world misbehaves (perturbations), how success is recognised on an
observation, who acts by default and how the world model samples. Success
criteria are deterministic rules (a regex, or a JSON path equal to a value) or
``judge`` (decided later by a judge model; it never fires here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from simulator.errors import SimulatorError
from simulator.perturbations import Perturbation, perturbation_problems
from simulator.types import Sampling

SCENARIO_SCHEMA_VERSION = 1
CriterionKind = Literal["regex", "json_path", "judge"]
PolicyKind = Literal["human", "scripted", "llm"]


class ScenarioError(SimulatorError):
    """A scenario spec that fails validation; ``problems`` lists every failure."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class SuccessCriterion:
    """One way to recognise success on an observation.

    ``regex``: ``pattern`` is searched in the observation. ``json_path``: the
    observation is JSON and the value at ``path`` (``$.a.b[0]`` or ``a.b.0``)
    equals ``value``. ``judge``: ``description`` is for a judge model.
    """

    kind: CriterionKind
    pattern: str = ""
    path: str = ""
    value: Any = None
    description: str = ""
    reward: float = 1.0
    terminate: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "pattern": self.pattern,
            "path": self.path,
            "value": self.value,
            "description": self.description,
            "reward": self.reward,
            "terminate": self.terminate,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SuccessCriterion:
        return cls(
            kind=data["kind"],
            pattern=data.get("pattern", ""),
            path=data.get("path", ""),
            value=data.get("value"),
            description=data.get("description", ""),
            reward=float(data.get("reward", 1.0)),
            terminate=bool(data.get("terminate", True)),
        )


def criterion_problems(data: Any, where: str) -> list[str]:
    if not isinstance(data, Mapping):
        return [f"{where}: must be an object"]
    problems = []
    kind = data.get("kind")
    if kind not in ("regex", "json_path", "judge"):
        problems.append(f"{where}.kind: must be regex, json_path or judge, not {kind!r}")
    if kind == "regex":
        pattern = data.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            problems.append(f"{where}.pattern: required text for a regex criterion")
        else:
            try:
                re.compile(pattern)
            except re.error as exc:
                problems.append(f"{where}.pattern: invalid regex ({exc})")
    if kind == "json_path":
        path = data.get("path")
        if not isinstance(path, str) or not path:
            problems.append(f"{where}.path: required text for a json_path criterion")
    reward = data.get("reward", 1.0)
    if isinstance(reward, bool) or not isinstance(reward, int | float):
        problems.append(f"{where}.reward: must be a number")
    if not isinstance(data.get("terminate", True), bool):
        problems.append(f"{where}.terminate: must be true or false")
    return problems


@dataclass(frozen=True)
class AgentPolicy:
    """Who acts by default: a ``human``, a ``scripted`` list of actions, or an ``llm`` endpoint."""

    kind: PolicyKind = "human"
    actions: tuple[str, ...] = ()
    endpoint: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "actions": list(self.actions), "endpoint": self.endpoint}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentPolicy:
        return cls(
            kind=data.get("kind", "human"),
            actions=tuple(data.get("actions", ())),
            endpoint=data.get("endpoint", ""),
        )


def policy_problems(data: Any) -> list[str]:
    if not isinstance(data, Mapping):
        return ["policy: must be an object"]
    problems = []
    kind = data.get("kind", "human")
    if kind not in ("human", "scripted", "llm"):
        problems.append(f"policy.kind: must be human, scripted or llm, not {kind!r}")
    actions = data.get("actions", [])
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        problems.append("policy.actions: must be a list of text")
    elif kind == "scripted" and not actions:
        problems.append("policy.actions: a scripted policy needs at least one action")
    endpoint = data.get("endpoint", "")
    if not isinstance(endpoint, str):
        problems.append("policy.endpoint: must be text")
    elif kind == "llm" and not endpoint:
        problems.append("policy.endpoint: an llm policy needs an endpoint name")
    return problems


@dataclass(frozen=True)
class Scenario:
    """A curated task with its perturbations, success criteria, policy and sampling."""

    title: str
    task: str = ""
    perturbations: tuple[Perturbation, ...] = ()
    success: tuple[SuccessCriterion, ...] = ()
    policy: AgentPolicy = field(default_factory=AgentPolicy)
    sampling: Sampling | None = None
    max_steps: int = 30
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCENARIO_SCHEMA_VERSION,
            "title": self.title,
            "task": self.task,
            "perturbations": [p.to_dict() for p in self.perturbations],
            "success": [c.to_dict() for c in self.success],
            "policy": self.policy.to_dict(),
            "sampling": self.sampling.to_dict() if self.sampling else None,
            "max_steps": self.max_steps,
            "seed": self.seed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """Build a validated scenario; :class:`ScenarioError` lists every problem."""
        problems = scenario_problems(data)
        if problems:
            raise ScenarioError(problems)
        sampling = data.get("sampling")
        return cls(
            title=data["title"],
            task=data.get("task", ""),
            perturbations=tuple(Perturbation.from_dict(p) for p in data.get("perturbations", [])),
            success=tuple(SuccessCriterion.from_dict(c) for c in data.get("success", [])),
            policy=AgentPolicy.from_dict(data.get("policy", {})),
            sampling=Sampling.from_dict(dict(sampling)) if sampling is not None else None,
            max_steps=int(data.get("max_steps", 30)),
            seed=int(data.get("seed", 0)),
        )


def scenario_problems(data: Any) -> list[str]:
    """Every problem with a scenario dict (empty when valid)."""
    if not isinstance(data, Mapping):
        return ["scenario: must be an object"]
    problems = []
    version = data.get("schema_version", SCENARIO_SCHEMA_VERSION)
    if version != SCENARIO_SCHEMA_VERSION:
        problems.append(f"scenario.schema_version: unsupported version {version!r}")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        problems.append("scenario.title: required text")
    if not isinstance(data.get("task", ""), str):
        problems.append("scenario.task: must be text")
    perturbations = data.get("perturbations", [])
    if not isinstance(perturbations, list):
        problems.append("scenario.perturbations: must be a list")
    else:
        for i, item in enumerate(perturbations):
            problems += [f"scenario.perturbations[{i}].{p}" for p in perturbation_problems(item)]
    success = data.get("success", [])
    if not isinstance(success, list):
        problems.append("scenario.success: must be a list")
    else:
        for i, item in enumerate(success):
            problems += criterion_problems(item, f"scenario.success[{i}]")
    problems += [f"scenario.{p}" for p in policy_problems(data.get("policy", {}))]
    sampling = data.get("sampling")
    if sampling is not None and not isinstance(sampling, Mapping):
        problems.append("scenario.sampling: must be an object or null")
    for name in ("max_steps", "seed"):
        value = data.get(name, 1)
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"scenario.{name}: must be an integer")
    max_steps = data.get("max_steps", 1)
    if isinstance(max_steps, int) and max_steps < 1:
        problems.append("scenario.max_steps: must be >= 1")
    return problems


@dataclass(frozen=True)
class SuccessOutcome:
    """What the success criteria say about one observation."""

    reward: float
    terminated: bool
    reason: str


_MISSING = object()


def json_path_value(data: Any, path: str) -> Any:
    """The value at ``$.a.b[0]`` / ``a.b.0`` in ``data``, or a private marker when absent."""
    steps = re.findall(r"[^.\[\]]+", path.removeprefix("$"))
    for step in steps:
        if isinstance(data, Mapping) and step in data:
            data = data[step]
        elif (
            isinstance(data, list)
            and step.lstrip("-").isdigit()
            and -len(data) <= int(step) < len(data)
        ):
            data = data[int(step)]
        else:
            return _MISSING
    return data


def evaluate_success(criteria: tuple[SuccessCriterion, ...], observation: str) -> SuccessOutcome:
    """Reward and termination from the first rule criterion that matches.

    ``judge`` criteria are skipped: a judge model decides them elsewhere.
    """
    parsed: Any = _MISSING
    for criterion in criteria:
        if criterion.kind == "regex" and re.search(criterion.pattern, observation):
            return SuccessOutcome(
                criterion.reward, criterion.terminate, f"matched /{criterion.pattern}/"
            )
        if criterion.kind == "json_path":
            if parsed is _MISSING:
                try:
                    parsed = json.loads(observation)
                except ValueError:
                    parsed = None
            if parsed is not None and json_path_value(parsed, criterion.path) == criterion.value:
                return SuccessOutcome(
                    criterion.reward,
                    criterion.terminate,
                    f"{criterion.path} == {json.dumps(criterion.value)}",
                )
    return SuccessOutcome(0.0, False, "no success criterion met")
