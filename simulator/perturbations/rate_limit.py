"""Rate limiting: the environment refuses because the agent called too often."""

from __future__ import annotations

from simulator.perturbations.registry import Enforced, KindInfo, Param
from simulator.perturbations.shapes import error_observation, observation_format
from simulator.perturbations.spec import Perturbation, StepContext


def _message(p: Perturbation) -> str:
    return f"Rate limit exceeded. Retry after {p.param('retry_after_s')} seconds."


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    return (
        "The environment is rate limiting the agent: this action is refused with a "
        f"'429 Too Many Requests' style error saying: {_message(p)}"
    )


def _enforce(p: Perturbation, observation: str, ctx: StepContext) -> Enforced:
    fmt = observation_format(observation, ctx.domain)
    error = error_observation(fmt, _message(p), code=429, action=ctx.action, previous=observation)
    return Enforced(
        error,
        f"rate limited: retry after {p.param('retry_after_s')} s",
        {"format": fmt, "chars_before": len(observation), "chars_after": len(error)},
    )


INFO = KindInfo(
    name="rate_limit",
    title="Rate limit",
    description="The call is refused with HTTP 429 and a Retry-After hint.",
    params=(Param("retry_after_s", "int", 30, "Seconds the agent is told to wait."),),
    instruction=_instruction,
    enforce=_enforce,
)
