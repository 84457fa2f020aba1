"""Curated turns: reviewed simulated turns, kept as training data with their provenance.

A simulated turn is *curated* when an annotator accepted it or corrected it. It
goes into a collection as the annotation that curated it (item kind
``curated_turn``, ``object_id`` the annotation), so an export can say exactly
whose judgement each record rests on, and it becomes one SFT conversation or one
AgentWorldBench row: the history the world model was shown (the real turns when
teacher-forced, its own simulated turns when free-running), then the turn's action
and the curated observation: the correction when there is one (it wins over
what the model said), else the accepted simulated observation.

When several people annotated a turn, the latest correction wins; without one,
the turn is curated only if someone accepted it and nobody rejected it: a turn
people disagree on is not data anyone has vouched for. An annotation that no
longer accepts or corrects when the export runs is skipped (and counted).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from simulator.awb_turns import render_observation
from simulator.episode import StepResult, Turn
from simulator.formats.awb import AwbRow
from simulator.formats.sft import episode_to_sft
from studio.core.models import Project
from studio.exports.models import Collection, ItemKind
from studio.exports.records import built_rows, turn_row
from studio.traces.models import (
    Annotation,
    SimulatedTurn,
    SimulationMode,
    TraceRow,
    TraceTurn,
    Verdict,
)

#: The formats a curated turn is written in; others (trajectory, bundle) skip it.
CURATED_FORMATS = ("sft", "awb")
CORRECTED = "corrected"
ACCEPTED = "accepted"


def curation_of(annotation: Annotation) -> str | None:
    """``corrected``, ``accepted``, or None when the annotation vouches for nothing."""
    if annotation.corrected_observation.strip():
        return CORRECTED
    if annotation.verdict == Verdict.ACCEPT:
        return ACCEPTED
    return None


def choose_annotation(notes: Sequence[Annotation]) -> Annotation | None:
    """The annotation that curates a turn, by the rules in the module docstring."""
    corrected = [a for a in notes if curation_of(a) == CORRECTED]
    if corrected:
        return max(corrected, key=lambda a: (a.updated_at, a.pk))
    if any(a.verdict == Verdict.REJECT for a in notes):
        return None
    accepted = [a for a in notes if a.verdict == Verdict.ACCEPT]
    return min(accepted, key=lambda a: (a.updated_at, a.pk)) if accepted else None


@dataclass(frozen=True)
class Curated:
    """What adding a set of turns to a collection did."""

    added: int
    corrected: int
    accepted: int
    #: Turns with accepts and rejects but no correction: left out.
    disputed: int


def collection_add_curated(*, collection: Collection, turns: QuerySet[SimulatedTurn]) -> Curated:
    """Add the curated turns among ``turns`` to the collection, in turn order."""
    notes: dict[int, list[Annotation]] = defaultdict(list)
    for annotation in Annotation.objects.filter(simulated_turn__in=turns).order_by("id"):
        notes[annotation.simulated_turn_id].append(annotation)
    chosen: list[Annotation] = []
    disputed = 0
    for turn_id in turns.values_list("pk", flat=True):
        pick = choose_annotation(notes.get(turn_id, []))
        if pick is not None:
            chosen.append(pick)
        elif {a.verdict for a in notes.get(turn_id, [])} >= {Verdict.ACCEPT, Verdict.REJECT}:
            disputed += 1
    from studio.exports.services import collection_add_items  # it imports this module

    added = collection_add_items(
        collection=collection, items=((ItemKind.CURATED_TURN, a.pk) for a in chosen)
    )
    corrected = sum(curation_of(a) == CORRECTED for a in chosen)
    return Curated(added, corrected, len(chosen) - corrected, disputed)


# ── Export ──────────────────────────────────────────────────────────────────────


@dataclass
class CuratedItem:
    """A curated turn resolved for export: its annotation, turn and the history before it."""

    annotation: Annotation
    turn: SimulatedTurn
    history: list[Turn] = field(default_factory=list)
    #: The trace's imported AgentWorldBench rows (empty when it came from elsewhere).
    rows: list[AwbRow] = field(default_factory=list)
    real_turns: list[TraceTurn] = field(default_factory=list)

    @property
    def curation(self) -> str:
        return curation_of(self.annotation) or ACCEPTED

    @property
    def observation(self) -> str:
        if self.curation == CORRECTED:
            return self.annotation.corrected_observation
        return self.turn.observation


def curated_items(project: Project, annotation_ids: Iterable[int]) -> dict[int, CuratedItem]:
    """The annotations that still curate a turn of the project, resolved (a few queries)."""
    annotations = [
        a
        for a in Annotation.objects.filter(
            pk__in=list(annotation_ids), simulated_turn__simulation__project=project
        ).select_related("user", "simulated_turn__simulation__trace", "simulated_turn__turn")
        if curation_of(a) is not None
    ]
    trace_ids = {a.simulated_turn.simulation.trace_id for a in annotations}
    real: dict[int, list[TraceTurn]] = defaultdict(list)
    for real_turn in TraceTurn.objects.filter(trace_id__in=trace_ids).order_by("trace_id", "index"):
        real[real_turn.trace_id].append(real_turn)
    rows: dict[int, list[AwbRow]] = defaultdict(list)
    for row in TraceRow.objects.filter(trace_id__in=trace_ids).order_by("trace_id", "position"):
        rows[row.trace_id].append(AwbRow(json.loads(row.text), row.position, row.text))
    free = {
        a.simulated_turn.simulation_id
        for a in annotations
        if a.simulated_turn.simulation.mode == SimulationMode.FREE_RUNNING
    }
    simulated: dict[int, dict[int, str]] = defaultdict(dict)
    for sim_id, index, observation in SimulatedTurn.objects.filter(
        simulation_id__in=free
    ).values_list("simulation_id", "index", "observation"):
        simulated[sim_id][index] = observation
    items = {}
    for a in annotations:
        turn = a.simulated_turn
        trace_id = turn.simulation.trace_id
        before = [t for t in real[trace_id] if t.index < turn.index]
        if turn.simulation_id in free:
            seen = simulated[turn.simulation_id]
            history = [Turn(t.action, seen.get(t.index, "")) for t in before]
        else:
            history = [Turn(t.action, t.observation) for t in before]
        items[a.pk] = CuratedItem(a, turn, history, rows[trace_id], real[trace_id])
    return items


def curated_record(item: CuratedItem, format: str, *, include_reasoning: bool) -> dict[str, Any]:
    """The item as one record of ``format`` (one of :data:`CURATED_FORMATS`)."""
    if format == "awb":
        return _awb_row(item)
    trace = item.turn.simulation.trace
    kept = item.turn.reasoning if item.curation == ACCEPTED else ""
    steps = [StepResult(t.action, t.observation, "", "", ()) for t in item.history]
    steps.append(StepResult(item.turn.turn.action, item.observation, kept, "", ()))
    return episode_to_sft(trace.system_prompt, steps, include_reasoning=include_reasoning).to_dict()


def _awb_row(item: CuratedItem) -> dict[str, Any]:
    """eval.py's row for the turn, its ground truth the curated observation."""
    trace = item.turn.simulation.trace
    index = item.turn.index
    if item.rows:
        row = turn_row(trace, index, rows=item.rows)
    else:
        row = built_rows(trace, item.real_turns)[index - 1]
    if item.turn.simulation.mode == SimulationMode.FREE_RUNNING:
        history = [render_observation(t.observation) for t in item.history]
    else:  # the benchmark's own text of the real turns, untouched
        history = list(row["response"][:-1])
    row["response"] = [*history, render_observation(item.observation)]
    return row


def curated_provenance(item: CuratedItem, *, record: int) -> dict[str, Any]:
    """Where the export's ``record``-th line (0-based) came from, for the manifest."""
    a = item.annotation
    turn = item.turn
    return {
        "record": record,
        "curation": item.curation,
        "annotation": a.pk,
        "annotator": a.user.get_username(),
        "verdict": a.verdict,
        "annotated_at": a.updated_at.isoformat(),
        "trace": turn.simulation.trace.title,
        "trace_id": turn.simulation.trace_id,
        "turn": turn.index,
        "simulation": turn.simulation_id,
        "simulation_mode": turn.simulation.mode,
        "simulated_turn": turn.pk,
    }
