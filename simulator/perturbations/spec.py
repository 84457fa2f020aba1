"""Perturbation specs, their triggers and the record of each firing.

A spec is plain data so a scenario can carry it in JSON. Whether a trigger fires
is a pure function of (episode seed, perturbation index, step number): the same
seed replays the same firings, and adding a perturbation never changes when the
others fire.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from simulator.errors import InvalidPerturbation

Mode = Literal["prompted", "enforced"]
MODES: tuple[Mode, ...] = ("prompted", "enforced")


@dataclass(frozen=True)
class Trigger:
    """When a perturbation fires.

    Steps are 1-based and inclusive; ``last_step=None`` means "until the end".
    ``action_pattern`` is a regex searched in the raw action; ``tool`` matches the
    tool name of an mcp/search action (the ``name`` or ``tool`` key of a JSON
    action, or ``name(`` at its start). ``probability`` is drawn per step from a
    generator seeded with (episode seed, index, step, ``seed``).
    """

    first_step: int = 1
    last_step: int | None = None
    action_pattern: str | None = None
    tool: str | None = None
    probability: float = 1.0
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "first_step": self.first_step,
            "last_step": self.last_step,
            "action_pattern": self.action_pattern,
            "tool": self.tool,
            "probability": self.probability,
            "seed": self.seed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trigger:
        problems = trigger_problems(data)
        if problems:
            raise InvalidPerturbation("; ".join(problems))
        return cls(
            first_step=int(data.get("first_step", 1)),
            last_step=data.get("last_step"),
            action_pattern=data.get("action_pattern") or None,
            tool=data.get("tool") or None,
            probability=float(data.get("probability", 1.0)),
            seed=int(data.get("seed", 0)),
        )


def trigger_problems(data: Any) -> list[str]:
    """Every problem with a trigger dict, prefixed with ``trigger.``."""
    if not isinstance(data, Mapping):
        return ["trigger: must be an object"]
    problems: list[str] = []
    unknown = set(data) - set(Trigger.__dataclass_fields__)
    if unknown:
        problems.append(f"trigger: unknown keys {sorted(unknown)}")
    first = data.get("first_step", 1)
    if not _is_int(first) or first < 1:
        problems.append("trigger.first_step: must be an integer >= 1")
    last = data.get("last_step")
    if last is not None and (not _is_int(last) or last < 1):
        problems.append("trigger.last_step: must be an integer >= 1 or null")
    elif last is not None and _is_int(first) and last < first:
        problems.append("trigger.last_step: must not be before first_step")
    pattern = data.get("action_pattern")
    if pattern is not None:
        if not isinstance(pattern, str):
            problems.append("trigger.action_pattern: must be text")
        else:
            try:
                re.compile(pattern)
            except re.error as exc:
                problems.append(f"trigger.action_pattern: invalid regex ({exc})")
    tool = data.get("tool")
    if tool is not None and not isinstance(tool, str):
        problems.append("trigger.tool: must be text")
    probability = data.get("probability", 1.0)
    if (
        isinstance(probability, bool)
        or not isinstance(probability, int | float)
        or not 0 <= probability <= 1
    ):
        problems.append("trigger.probability: must be a number between 0 and 1")
    if not _is_int(data.get("seed", 0)):
        problems.append("trigger.seed: must be an integer")
    return problems


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Perturbation:
    """One perturbation: what to change (``kind``, ``params``), how and when."""

    kind: str
    mode: Mode = "prompted"
    params: Mapping[str, Any] = field(default_factory=dict)
    trigger: Trigger = field(default_factory=Trigger)
    label: str = ""

    def param(self, name: str) -> Any:
        """The parameter's value, or the kind's default when not set."""
        if name in self.params:
            return self.params[name]
        from simulator.perturbations.registry import PERTURBATION_KINDS

        return PERTURBATION_KINDS[self.kind].default(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "mode": self.mode,
            "params": dict(self.params),
            "trigger": self.trigger.to_dict(),
            "label": self.label,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Perturbation:
        """Build a validated perturbation; :class:`InvalidPerturbation` lists every problem."""
        problems = perturbation_problems(data)
        if problems:
            raise InvalidPerturbation("; ".join(problems))
        return cls(
            kind=data["kind"],
            mode=data.get("mode", "prompted"),
            params=dict(data.get("params", {})),
            trigger=Trigger.from_dict(data.get("trigger", {})),
            label=data.get("label", ""),
        )


def perturbation_problems(data: Any) -> list[str]:
    """Every problem with a perturbation dict (empty when valid)."""
    from simulator.perturbations.registry import PERTURBATION_KINDS

    if not isinstance(data, Mapping):
        return ["perturbation: must be an object"]
    problems: list[str] = []
    unknown = set(data) - {"kind", "mode", "params", "trigger", "label"}
    if unknown:
        problems.append(f"perturbation: unknown keys {sorted(unknown)}")
    kind = data.get("kind")
    info = PERTURBATION_KINDS.get(kind) if isinstance(kind, str) else None
    if info is None:
        problems.append(f"kind: unknown kind {kind!r} (known: {', '.join(PERTURBATION_KINDS)})")
    mode = data.get("mode", "prompted")
    if mode not in MODES:
        problems.append(f"mode: must be 'prompted' or 'enforced', not {mode!r}")
    elif info is not None and mode not in info.modes:
        problems.append(f"mode: {kind} supports only {', '.join(info.modes)}")
    if not isinstance(data.get("label", ""), str):
        problems.append("label: must be text")
    params = data.get("params", {})
    if not isinstance(params, Mapping):
        problems.append("params: must be an object")
    elif info is not None:
        problems.extend(info.param_problems(params))
    problems.extend(trigger_problems(data.get("trigger", {})))
    return problems


@dataclass(frozen=True)
class StepContext:
    """What a trigger and a transform may look at: the step being taken."""

    step: int
    action: str
    domain: str
    seed: int = 0


def action_tool_name(action: str) -> str | None:
    """The tool an mcp/search action calls, or None when it names none."""
    text = action.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key in ("name", "tool"):
                if isinstance(data.get(key), str):
                    return str(data[key])
    match = re.match(r"([A-Za-z_][\w.-]*)\s*\(", text)
    return match.group(1) if match else None


def draw(seed: int, index: int, step: int, salt: int = 0) -> float:
    """A uniform number in [0, 1) that depends only on its arguments.

    sha256 of the arguments seeds the generator, so the value is the same in
    every process and on every Python version (unlike ``hash()``).
    """
    digest = hashlib.sha256(f"{seed}:{index}:{step}:{salt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big")).random()


def fires(perturbation: Perturbation, index: int, ctx: StepContext) -> bool:
    """Whether perturbation number ``index`` fires on this step."""
    trigger = perturbation.trigger
    if ctx.step < trigger.first_step:
        return False
    if trigger.last_step is not None and ctx.step > trigger.last_step:
        return False
    if trigger.action_pattern and not re.search(trigger.action_pattern, ctx.action):
        return False
    if trigger.tool and action_tool_name(ctx.action) != trigger.tool:
        return False
    if trigger.probability >= 1:
        return True
    return draw(ctx.seed, index, ctx.step, trigger.seed) < trigger.probability


@dataclass(frozen=True)
class Firing:
    """One applied perturbation, as recorded on the step.

    ``summary`` is one human-readable line; ``details`` holds numbers the UI can
    show (chars before/after, the instruction text, a simulated delay).
    ``changed`` is False when an enforced transform did not apply (e.g. schema
    drift on an observation that is not JSON).
    """

    index: int
    kind: str
    mode: Mode
    summary: str
    details: Mapping[str, Any] = field(default_factory=dict)
    changed: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kind": self.kind,
            "mode": self.mode,
            "summary": self.summary,
            "details": dict(self.details),
            "changed": self.changed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Firing:
        try:
            return cls(
                index=int(data["index"]),
                kind=str(data["kind"]),
                mode=data["mode"],
                summary=str(data.get("summary", "")),
                details=dict(data.get("details", {})),
                changed=bool(data.get("changed", True)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidPerturbation(f"firing: malformed record ({exc})") from exc
