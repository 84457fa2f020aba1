"""A trace as AgentWorldBench rows: the one place the studio turns traces into rows and back.

An imported row is kept as it was read (:class:`~studio.traces.models.TraceRow`)
and is what every export writes and what re-simulation asks the model, so the
benchmark's own text (its system prompt, turn layout and instruction) is
authoritative. Traces that did not come from a row file get rows built by
:func:`simulator.formats.awb.episode_to_awb_rows`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from simulator.awb_turns import STATE
from simulator.errors import InvalidWorld
from simulator.formats.awb import AwbRow, dump_row, episode_to_awb_rows, trajectory_of
from simulator.prompting import system_message
from simulator.world import World
from studio.core.models import Project
from studio.traces.models import Trace, TraceRow, TraceSource, TraceTurn


def trace_fields(row: AwbRow) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The fields of the trace a trajectory's latest row becomes, and its turns."""
    trajectory = trajectory_of(row)
    turns = [
        {"action": turn.action, "observation": turn.observation, "prompt_text": text}
        for turn, text in zip(trajectory.turns, trajectory.prompt_texts, strict=True)
    ]
    fields = {
        "domain": trajectory.domain,
        "source": TraceSource.AWB,
        "task": trajectory.task,
        "external_id": json.dumps(trajectory.id),
        "title": f"{trajectory.task} #{trajectory.id}",
        "system_prompt": trajectory.system_str,
        "metadata": {
            "initial_state": trajectory.initial_state or "",
            "agent_task": trajectory.agent_task or "",
            "instruction": trajectory.instruction,
            "total_turns": trajectory.total_turns,
        },
    }
    return fields, turns


def stored_rows(trace: Trace) -> list[AwbRow]:
    """The rows imported for ``trace``, in file order (empty when it came from elsewhere)."""
    return [
        AwbRow(json.loads(row.text), row.position, row.text)
        for row in TraceRow.objects.filter(trace=trace).order_by("position")
    ]


def turn_row(trace: Trace, index: int, *, rows: list[AwbRow] | None = None) -> dict[str, Any]:
    """The row eval.py evaluates for turn ``index`` of ``trace``.

    The imported row with that ``turn_idx`` when the file had one; else the row
    the benchmark would have written, built from the latest imported row's
    turns; for a trace that came from elsewhere, the row built from its turns.
    ``rows``: the trace's :func:`stored_rows`, when the caller has read them already.
    """
    rows = stored_rows(trace) if rows is None else rows
    exact = next((row for row in rows if row.turn_idx == index), None)
    if exact is not None:
        return dict(exact.data)
    latest = max(rows, key=lambda row: row.turn_idx, default=None)
    if latest is not None and index <= latest.turn_idx:
        return latest.for_turn(index)
    return built_rows(trace, list(trace.turns.all()))[index - 1]


def built_rows(trace: Trace, turns: Sequence[TraceTurn]) -> list[dict[str, Any]]:
    """Rows for a trace without imported rows: one per turn, in the benchmark's layout."""
    if not turns:
        return []
    world = trace_world(trace)
    task = str(trace.metadata.get("task") or "") or None
    try:
        identifier: Any = json.loads(trace.external_id)
    except ValueError:
        identifier = trace.external_id or trace.pk
    from simulator.episode import Turn

    return episode_to_awb_rows(
        [Turn(t.action, t.observation) for t in turns],
        task=trace.task if trace.source == TraceSource.AWB else trace.domain,
        trajectory_id=identifier,
        system_str=trace.system_prompt or system_message(world, task)["content"],
        sections=[(STATE, initial)] if (initial := trace.metadata.get("initial_state")) else [],
    )


def trace_rows(trace: Trace, turns: Sequence[TraceTurn]) -> list[dict[str, Any]]:
    """The trace's rows as objects: the imported ones, else rows built from its turns."""
    stored = stored_rows(trace)
    return [dict(row.data) for row in stored] if stored else built_rows(trace, turns)


def project_lines(project: Project) -> Iterator[str]:
    """Every row of the project's traces as a line with its ending: imported rows byte for
    byte (a file's last line may have none), in file order.

    Imported rows come first, ordered by import and line, so a file imported into
    a project gives back exactly its lines; then the rows of the other traces.
    """
    imported = TraceRow.objects.filter(trace__project=project).order_by(
        "trace__import_job_id", "position", "id"
    )
    for row in imported.iterator(chunk_size=500):
        yield row.text
    others = (
        Trace.objects.filter(project=project)
        .exclude(rows__isnull=False)
        .order_by("created_at", "id")
        .prefetch_related("turns")
    )
    for trace in others:
        for data in built_rows(trace, list(trace.turns.all())):
            yield dump_row(data) + "\n"


def trace_world(trace: Trace) -> World:
    """The world a trace is simulated in: the recorded one, else one from its initial state."""
    recorded = trace.metadata.get("world")
    if isinstance(recorded, dict):
        try:
            return World.from_dict(recorded)
        except InvalidWorld:
            pass
    return World(
        domain=trace.domain or "unknown",
        title=trace.title or "Trace",
        initial_observation=str(trace.metadata.get("initial_state") or ""),
    )
