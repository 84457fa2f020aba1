"""Judging simulated turns (rubric scores and blind A/B guesses), and storing the
generations and scores of ``awb infer`` / ``awb judge`` runs for review."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from django.utils import timezone

from simulator.backends import create_backend
from simulator.formats.awb import AwbRow, id_key
from simulator.review.judge import (
    DIMENSIONS,
    build_judge_messages,
    complete,
    extract_observation,
    judge_messages,
    judged_fields,
    normalize,
    parse_choice,
    turing_messages,
)
from simulator.types import EVAL_SAMPLING
from studio.core.endpoints import describe_spec
from studio.core.models import ModelEndpoint, Project
from studio.exports.records import turn_row
from studio.traces.models import (
    JudgeScore,
    SimulatedTurn,
    Simulation,
    SimulationStatus,
    Trace,
    TraceSource,
    TuringGuess,
)
from studio.traces.services.importing import trace_fields, trace_get_or_create
from studio.traces.services.simulations import endpoint_spec


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


def judge_simulation(
    *, simulation_id: int, endpoint_id: int | None = None, turing: bool = False
) -> int:
    """Judge every simulated turn (rubric scores, or blind A/B guesses); returns how many."""
    simulation = Simulation.objects.select_related("trace").get(pk=simulation_id)
    endpoint = ModelEndpoint.objects.filter(pk=endpoint_id).first() if endpoint_id else None
    spec = endpoint_spec(endpoint)
    label = describe_spec(spec)
    turns = list(simulation.turns.exclude(observation="").select_related("simulation__trace"))
    rows = [(t, awb_row_for(t)) for t in turns]

    async def run() -> list[Any]:
        backend = create_backend(spec)
        try:
            results: list[Any] = []
            for turn, row in rows:
                if turing:
                    rng = random.Random(turn.pk)
                    real_first = rng.random() < 0.5
                    a, b = (row["response"][-1], turn.observation)
                    if not real_first:
                        a, b = b, a
                    raw = await complete(backend, turing_messages(row, a, b))
                    results.append(("A" if real_first else "B", raw))
                else:
                    # eval.py's judge sampling; no top_p/top_k (only sent when set).
                    verdict = await judge_messages(
                        backend, build_judge_messages(row, turn.observation), sampling=EVAL_SAMPLING
                    )
                    results.append(judged_fields(verdict, turn.observation))
            return results
        finally:
            await backend.aclose()

    results = asyncio.run(run())
    for (turn, _), result in zip(rows, results, strict=True):
        if turing:
            real_position, raw = result
            TuringGuess.objects.create(
                simulated_turn=turn,
                real_position=real_position,
                guess=parse_choice(raw) or "",
                judge_raw_output=raw,
                judge_endpoint=label,
            )
        else:
            judge_score_save(turn=turn, fields=result, endpoint_label=label)
    return len(rows)


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
