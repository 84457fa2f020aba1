"""Latency: the environment is slow.

Enforced latency never sleeps: the delay is recorded on the firing (and so on the
step) as ``simulated_delay_ms`` for agents and reports to account for, keeping
rollouts fast and deterministic. When ``timeout_ms`` is set and the delay exceeds
it, the observation becomes the domain's timeout error.
"""

from __future__ import annotations

from simulator.perturbations.registry import Enforced, KindInfo, Param
from simulator.perturbations.shapes import error_observation, observation_format
from simulator.perturbations.spec import Perturbation, StepContext


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    return (
        f"The environment is slow: this action takes about {p.param('delay_ms')} ms. "
        "Show any signs of slowness the environment would show (timing lines, spinners, "
        "'still waiting' notices)."
    )


def _enforce(p: Perturbation, observation: str, ctx: StepContext) -> Enforced:
    delay = int(p.param("delay_ms"))
    timeout = int(p.param("timeout_ms"))
    details = {"simulated_delay_ms": delay}
    if timeout and delay > timeout:
        fmt = observation_format(observation, ctx.domain)
        error = error_observation(
            fmt,
            f"Operation timed out after {timeout} ms",
            code=504,
            action=ctx.action,
            previous=observation,
        )
        return Enforced(error, f"simulated {delay} ms > timeout {timeout} ms: timed out", details)
    return Enforced(
        observation, f"simulated delay of {delay} ms (not slept)", details, changed=False
    )


INFO = KindInfo(
    name="latency",
    title="Latency",
    description="A simulated delay, recorded on the step (never slept); may end in a timeout.",
    params=(
        Param("delay_ms", "int", 3000, "Simulated delay in milliseconds."),
        Param("timeout_ms", "int", 0, "If > 0 and the delay exceeds it, the call times out."),
    ),
    instruction=_instruction,
    enforce=_enforce,
)
