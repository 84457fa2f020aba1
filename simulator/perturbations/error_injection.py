"""Error injection: the call fails instead of answering."""

from __future__ import annotations

from simulator.perturbations.registry import Enforced, KindInfo, Param
from simulator.perturbations.shapes import error_observation, observation_format
from simulator.perturbations.spec import Perturbation, StepContext


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    return (
        f"This action fails. Instead of a normal result, show the error this environment "
        f"would really produce (status {p.param('code')}): {p.param('message')}"
    )


def _enforce(p: Perturbation, observation: str, ctx: StepContext) -> Enforced:
    fmt = observation_format(observation, ctx.domain)
    error = error_observation(
        fmt,
        str(p.param("message")),
        code=int(p.param("code")),
        action=ctx.action,
        previous=observation,
    )
    return Enforced(
        error,
        f"replaced the {fmt} observation with an error ({len(observation)} → {len(error)} chars)",
        {"format": fmt, "chars_before": len(observation), "chars_after": len(error)},
    )


INFO = KindInfo(
    name="error_injection",
    title="Error injection",
    description="The action fails: the observation becomes the environment's own error message.",
    params=(
        Param("message", "str", "Internal server error", "The error message shown."),
        Param("code", "int", 500, "Status or error code (HTTP-like)."),
    ),
    instruction=_instruction,
    enforce=_enforce,
)
