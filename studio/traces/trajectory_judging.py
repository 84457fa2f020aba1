"""The trajectory-level judge in the studio: ask once per simulation, store, show live.

The judge itself is :mod:`simulator.review.trajectory_judge`; here its turns are
read from a simulation, its verdict is stored on ``Simulation.trajectory_judgement``
(only the latest is kept: judging again replaces it) and sent to the review pages
open on the simulation as the rendered ``#trajectory-judge`` card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone

from simulator.backends import create_backend
from simulator.review.trajectory_judge import (
    TRAJECTORY_DIMENSIONS,
    TrajectoryTurn,
    TrajectoryVerdict,
    judge_trajectory,
)
from studio.core.endpoints import describe_spec
from studio.core.models import ModelEndpoint
from studio.lib.channels import PROGRESS, send_to_group
from studio.lib.step_loop import run_on_step_loop
from studio.traces import services
from studio.traces.models import Simulation

DIMENSION_LABELS = {
    "state_tracking": "State tracking",
    "consistency": "Cross-turn consistency",
    "causality": "Causal coherence",
    "fidelity": "Fidelity",
}


def trajectory_turns(simulation: Simulation) -> list[TrajectoryTurn]:
    """The simulated turns in order, each beside its real action and observation."""
    return [
        TrajectoryTurn(
            index=turn.index,
            action=turn.turn.action,
            real=turn.turn.observation,
            simulated=turn.observation if turn.observation or not turn.error else None,
        )
        for turn in simulation.turns.select_related("turn").order_by("index")
    ]


def _task(simulation: Simulation) -> str:
    """The agent's task, when the trace records one (trajectory imports do)."""
    task = (simulation.trace.metadata or {}).get("task")
    return task if isinstance(task, str) else ""


def trajectory_judge_run(*, simulation_id: int, endpoint_id: int | None = None) -> Simulation:
    """Judge the whole simulated trajectory, store the verdict and publish it."""
    simulation = Simulation.objects.select_related("trace").get(pk=simulation_id)
    endpoint = ModelEndpoint.objects.filter(pk=endpoint_id).first() if endpoint_id else None
    spec = services.endpoint_spec(endpoint)
    turns = trajectory_turns(simulation)
    trace = simulation.trace

    async def run() -> TrajectoryVerdict:
        backend = create_backend(spec)
        try:
            return await judge_trajectory(
                backend,
                turns,
                domain=trace.domain,
                mode=simulation.mode,
                task=_task(simulation),
                initial_observation=str((trace.metadata or {}).get("initial_state", "")),
            )
        finally:
            await backend.aclose()

    verdict = run_on_step_loop(run)
    simulation.trajectory_judgement = {
        **verdict.to_dict(),
        "judge_endpoint": describe_spec(spec),
        "judged_at": timezone.now().isoformat(),
        "turns": len(turns),
    }
    simulation.save(update_fields=["trajectory_judgement"])
    send_to_group(
        simulation.group_name, {"type": PROGRESS, "html": trajectory_card_html(simulation)}
    )
    return simulation


@dataclass(frozen=True)
class TrajectoryCard:
    """What the review page shows of the stored verdict."""

    judgement: dict[str, Any]
    rows: list[tuple[str, int]]

    @property
    def success(self) -> bool:
        return bool(self.judgement.get("success"))


def trajectory_card(simulation: Simulation) -> TrajectoryCard | None:
    """The stored verdict with labelled dimension rows; None when never judged."""
    judgement = simulation.trajectory_judgement or {}
    if not judgement:
        return None
    scores = judgement.get("scores") or {}
    rows = [(DIMENSION_LABELS[name], int(scores.get(name) or 0)) for name in TRAJECTORY_DIMENSIONS]
    return TrajectoryCard(judgement=judgement, rows=rows)


def trajectory_card_html(simulation: Simulation) -> str:
    return render_to_string(
        "traces/_trajectory-judge.html", {"trajectory": trajectory_card(simulation)}
    )
