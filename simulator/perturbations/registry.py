"""The perturbation kinds: what each one is, its parameters and its modes.

The studio builds its perturbation forms from :data:`PERTURBATION_KINDS`, so a
kind's parameters carry a type, a default and a help text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from simulator.perturbations.spec import Mode, Perturbation, StepContext

ParamType = Literal["str", "int", "float", "bool", "list[str]", "dict[str,str]"]


@dataclass(frozen=True)
class Param:
    """One parameter of a kind, as a form field."""

    name: str
    type: ParamType
    default: Any
    help: str
    choices: tuple[str, ...] = ()

    def problem(self, value: Any) -> str | None:
        """Why ``value`` does not fit this parameter, or None."""
        ok = {
            "str": lambda v: isinstance(v, str),
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "list[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
            "dict[str,str]": lambda v: (
                isinstance(v, Mapping)
                and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items())
            ),
        }[self.type](value)
        if not ok:
            return f"params.{self.name}: must be {self.type}"
        if self.choices and value not in self.choices:
            return f"params.{self.name}: must be one of {', '.join(self.choices)}"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "help": self.help,
            "choices": list(self.choices),
        }


@dataclass(frozen=True)
class Enforced:
    """The result of an enforced transform."""

    observation: str
    summary: str
    details: Mapping[str, Any] = field(default_factory=dict)
    changed: bool = True


Instruction = Callable[["Perturbation", "StepContext"], str]
Transform = Callable[["Perturbation", str, "StepContext"], Enforced]


@dataclass(frozen=True)
class KindInfo:
    """A perturbation kind: its description for the UI and its two behaviours.

    ``instruction`` writes the prompted-mode control instruction; ``enforce`` (None
    when the kind cannot be made deterministic) transforms the observation.
    """

    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    instruction: Instruction
    enforce: Transform | None = None

    @property
    def modes(self) -> tuple[Mode, ...]:
        return ("prompted", "enforced") if self.enforce else ("prompted",)

    def default(self, name: str) -> Any:
        for param in self.params:
            if param.name == name:
                return param.default
        raise KeyError(f"{self.name} has no parameter {name!r}")

    def param_problems(self, params: Mapping[str, Any]) -> list[str]:
        known = {p.name: p for p in self.params}
        problems = [f"params.{name}: unknown parameter" for name in params if name not in known]
        for name, value in params.items():
            if name in known and (problem := known[name].problem(value)):
                problems.append(problem)
        return problems

    def to_dict(self) -> dict[str, Any]:
        """The kind as the UI's form builder reads it."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "params": [p.to_dict() for p in self.params],
            "modes": list(self.modes),
        }


def _load() -> dict[str, KindInfo]:
    from simulator.perturbations import (
        distractor,
        error_injection,
        hidden_answer,
        instruction,
        latency,
        pagination,
        rate_limit,
        schema_drift,
        stale_data,
        truncation,
        ui_interrupt,
    )

    modules = (
        error_injection,
        hidden_answer,
        pagination,
        truncation,
        latency,
        rate_limit,
        schema_drift,
        stale_data,
        distractor,
        ui_interrupt,
        instruction,
    )
    return {m.INFO.name: m.INFO for m in modules}


PERTURBATION_KINDS: dict[str, KindInfo] = _load()
