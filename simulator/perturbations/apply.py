"""Deciding firings for a step and applying them.

The engine calls :func:`prompted_firings` before the request (their instructions
go into the current user message) and :func:`enforce` after parsing the model's
answer (transforms run in perturbation order).
"""

from __future__ import annotations

from collections.abc import Sequence

from simulator.perturbations.registry import PERTURBATION_KINDS
from simulator.perturbations.spec import Firing, Perturbation, StepContext, fires


def firing_indexes(perturbations: Sequence[Perturbation], ctx: StepContext) -> tuple[int, ...]:
    """Indexes of the perturbations that fire on this step."""
    return tuple(i for i, p in enumerate(perturbations) if fires(p, i, ctx))


def prompted_firings(
    perturbations: Sequence[Perturbation], indexes: Sequence[int], ctx: StepContext
) -> tuple[Firing, ...]:
    """A firing with its instruction text for each prompted perturbation that fires."""
    firings = []
    for i in indexes:
        p = perturbations[i]
        if p.mode != "prompted":
            continue
        text = PERTURBATION_KINDS[p.kind].instruction(p, ctx)
        firings.append(Firing(i, p.kind, "prompted", f"instruction: {text}", {"instruction": text}))
    return tuple(firings)


def enforce(
    perturbations: Sequence[Perturbation],
    indexes: Sequence[int],
    observation: str,
    ctx: StepContext,
) -> tuple[str, tuple[Firing, ...]]:
    """Apply the enforced perturbations that fire, in order; return the result and firings."""
    firings = []
    for i in indexes:
        p = perturbations[i]
        transform = PERTURBATION_KINDS[p.kind].enforce
        if p.mode != "enforced" or transform is None:
            continue
        done = transform(p, observation, ctx)
        observation = done.observation
        firings.append(Firing(i, p.kind, "enforced", done.summary, done.details, done.changed))
    return observation, tuple(firings)
