"""Judging simulated turns (rubric scores and blind A/B guesses), and storing the
generations and scores of ``awb infer`` / ``awb judge`` runs for review."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from simulator.formats.awb import AwbRow, id_key
from simulator.review.judge import (
    DIMENSIONS,
    extract_observation,
    normalize,
)
from studio.core.models import Project
from studio.exports.records import turn_row
from studio.traces.models import (
    JudgeScore,
    SimulatedTurn,
    Simulation,
    SimulationStatus,
    Trace,
    TraceSource,
)
from studio.traces.services.importing import trace_fields, trace_get_or_create


def awb_row_for(turn: SimulatedTurn) -> dict[str, Any]:
    """The AgentWorldBench row a simulated turn answers (for the judge's context)."""
    return turn_row(turn.simulation.trace, turn.index)


def judge_score_save(
    *, turn: SimulatedTurn, fields: dict[str, Any], endpoint_label: str
) -> JudgeScore:
    """Store eval.py-style judge fields for a simulated turn."""
    failed = bool(fields.get("failed", 1.0))
    mean_score = float(fields.get("total_score", 0) or 0)
    return JudgeScore.objects.create(
        simulated_turn=turn,
        **{d: int(fields.get(d, 0) or 0) for d in DIMENSIONS},
        mean_score=mean_score,
        total_score=normalize(mean_score) if mean_score else 0.0,
        failed=failed,
        strengths=list(fields.get("strengths", [])),
        weaknesses=list(fields.get("weaknesses", [])),
        extracted_output=str(fields.get("extracted_output", "")),
        judge_raw_output=str(fields.get("judge_raw_output", "")),
        judge_endpoint=endpoint_label,
    )


# The judge task itself (concurrent, with live badges) is studio/traces/turn_judging.py.


def _awb_simulated_turn(project: Project, row: dict[str, Any], label: str) -> SimulatedTurn:
    """The stored simulated turn of an AWB row's ``gen`` (its trace created if missing)."""
    fields, turns = trace_fields(AwbRow(row))
    trace = (
        Trace.objects.filter(
            project=project,
            source=TraceSource.AWB,
            task=fields["task"],
            external_id=fields["external_id"],
        )
        .order_by("id")
        .first()
    )
    if trace is None or trace.turns.count() < int(row["turn_idx"]):
        trace, _ = trace_get_or_create(project, None, fields, turns)
    simulation, _ = Simulation.objects.get_or_create(
        project=project,
        trace=trace,
        origin="awb",
        endpoint_label=label[:300],
        defaults={
            "mode": "teacher_forced",
            "status": SimulationStatus.DONE,
            "finished_at": timezone.now(),
        },
    )
    index = int(row["turn_idx"])
    gen = str(row.get("gen", ""))
    turn, _ = SimulatedTurn.objects.update_or_create(
        simulation=simulation,
        index=index,
        defaults={
            "turn": trace.turns.get(index=index),
            "observation": extract_observation(gen) if gen else "",
            "raw_output": gen,
            "error": "" if gen else "no generation",
        },
    )
    done = simulation.turns.count()
    Simulation.objects.filter(pk=simulation.pk).update(turns_done=done)
    return turn


def awb_store_predictions(*, project: Project, rows: list[dict[str, Any]], label: str) -> int:
    """Store ``awb infer`` generations as simulated turns for review; returns how many."""
    for row in rows:
        _awb_simulated_turn(project, row, label)
    return len(rows)


def awb_store_judged(*, project: Project, rows: list[dict[str, Any]], label: str) -> int:
    """Store ``awb judge`` results (and their generations) in the studio; returns how many."""
    for row in rows:
        # The generation stored by `awb infer --project` if there is one, else a new record.
        stored = (
            SimulatedTurn.objects.filter(
                simulation__project=project,
                simulation__origin="awb",
                simulation__trace__task=str(row.get("task", "")),
                simulation__trace__external_id=id_key(row.get("id")),
                index=int(row["turn_idx"]),
                raw_output=str(row.get("gen", "")),
            )
            .order_by("-id")
            .first()
        )
        turn = stored or _awb_simulated_turn(project, row, "awb judge input")
        judge_score_save(turn=turn, fields=row, endpoint_label=label)
    return len(rows)
