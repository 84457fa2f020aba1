"""Stale data: values come from an earlier time or an older version."""

from __future__ import annotations

from simulator.perturbations.registry import Enforced, KindInfo, Param
from simulator.perturbations.spec import Perturbation, StepContext


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    return (
        f"The data shown is stale: it reflects the state as of {p.param('as_of')}, "
        "not the current state. Recent changes are missing and values are out of date."
    )


def _enforce(p: Perturbation, observation: str, ctx: StepContext) -> Enforced:
    result = observation
    count = 0
    for current, old in dict(p.param("replacements")).items():
        count += result.count(current)
        result = result.replace(current, old)
    return Enforced(
        result,
        f"{count} current values replaced by older ones",
        {"replaced": count, "chars_before": len(observation), "chars_after": len(result)},
        changed=count > 0,
    )


INFO = KindInfo(
    name="stale_data",
    title="Stale data",
    description="Observation values are replaced by their older versions.",
    params=(
        Param("as_of", "str", "a week ago", "When the stale data is from (for the instruction)."),
        Param("replacements", "dict[str,str]", {}, "Current text → stale text (enforced mode)."),
    ),
    instruction=_instruction,
    enforce=_enforce,
)
