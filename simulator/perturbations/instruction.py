"""A free-text control instruction (prompted only: nothing deterministic to enforce)."""

from __future__ import annotations

from simulator.perturbations.registry import KindInfo, Param
from simulator.perturbations.spec import Perturbation, StepContext


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    return str(p.param("text"))


INFO = KindInfo(
    name="instruction",
    title="Control instruction",
    description="Any instruction to the world model for this observation.",
    params=(Param("text", "str", "", "The instruction, in plain words."),),
    instruction=_instruction,
)
