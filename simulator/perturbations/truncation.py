"""Truncation: the output is cut off."""

from __future__ import annotations

from simulator.perturbations.registry import Enforced, KindInfo, Param
from simulator.perturbations.spec import Perturbation, StepContext


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    return (
        f"The output is cut off after about {p.param('max_chars')} characters, mid-content, "
        "as a size-limited tool would truncate it."
    )


def _enforce(p: Perturbation, observation: str, ctx: StepContext) -> Enforced:
    limit = int(p.param("max_chars"))
    if len(observation) <= limit:
        return Enforced(observation, f"shorter than {limit} chars; unchanged", changed=False)
    cut = len(observation) - limit
    result = observation[:limit] + str(p.param("marker")).format(cut=cut)
    return Enforced(
        result,
        f"cut at {limit} chars ({len(observation)} → {len(result)})",
        {"chars_before": len(observation), "chars_after": len(result)},
    )


INFO = KindInfo(
    name="truncation",
    title="Truncation",
    description="The observation is cut after N characters, with a marker.",
    params=(
        Param("max_chars", "int", 2000, "Characters kept."),
        Param(
            "marker",
            "str",
            "\n[... {cut} characters truncated ...]",
            "Appended; {cut} is the count.",
        ),
    ),
    instruction=_instruction,
    enforce=_enforce,
)
