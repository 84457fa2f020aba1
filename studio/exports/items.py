"""Collection items resolved to what they export as, a bounded chunk at a time.

Items are resolved :data:`CHUNK` at a time (a few queries per chunk, never one
per row), so an export holds at most one chunk of episodes in memory whatever
the collection's size. A step item stands for its episode up to and including
that step, a trace turn for its trace up to that turn; a scenario item is
exported by the bundle format only. :mod:`studio.exports.records` turns what
this gives into records.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TypeVar

from studio.core.models import Project
from studio.episodes.models import Episode, Step, StepStatus
from studio.exports.curation import CuratedItem, curated_items
from studio.exports.models import Collection, ItemKind
from studio.exports.records import EpisodeItem, TraceItem
from studio.traces.models import Trace, TraceTurn
from studio.worlds.models import Scenario

CHUNK = 200

T = TypeVar("T")


def chunked(values: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(values)
    while batch := list(islice(iterator, size)):
        yield batch


Resolved = EpisodeItem | TraceItem | CuratedItem | Scenario | None


def resolve(project: Project, pairs: Iterable[tuple[str, int]]) -> Iterator[tuple[str, Resolved]]:
    """(kind, object) for each (kind, id), in order; None for an object that is gone."""
    for chunk in chunked(pairs, CHUNK):
        yield from _resolve_chunk(project, chunk)


def collection_pairs(collection: Collection) -> Iterator[tuple[str, int]]:
    items = collection.items.order_by("id").values_list("kind", "object_id")
    return items.iterator(chunk_size=CHUNK)


def _resolve_chunk(
    project: Project, chunk: list[tuple[str, int]]
) -> Iterator[tuple[str, Resolved]]:
    ids: dict[str, list[int]] = defaultdict(list)
    for kind, object_id in chunk:
        ids[kind].append(object_id)
    step_heads = {
        pk: (episode_id, index)
        for pk, episode_id, index in Step.objects.filter(
            pk__in=ids[ItemKind.STEP], episode__project=project
        ).values_list("pk", "episode_id", "index")
    }
    episode_ids = set(ids[ItemKind.EPISODE]) | {e for e, _ in step_heads.values()}
    episodes = Episode.objects.filter(pk__in=episode_ids, project=project).select_related(
        "world_revision", "scenario"
    )
    by_id = {e.pk: e for e in episodes}
    steps: dict[int, list[Step]] = defaultdict(list)
    for step in Step.objects.filter(episode_id__in=by_id, status=StepStatus.DONE).order_by(
        "episode_id", "index"
    ):
        steps[step.episode_id].append(step)
    scenarios = Scenario.objects.filter(
        pk__in=ids[ItemKind.SCENARIO], project=project
    ).select_related("world_revision")
    scenario_by_id = {s.pk: s for s in scenarios}
    turn_heads = {
        pk: (trace_id, index)
        for pk, trace_id, index in TraceTurn.objects.filter(
            pk__in=ids[ItemKind.TRACE_TURN], trace__project=project
        ).values_list("pk", "trace_id", "index")
    }
    traces = {t.pk: t for t in Trace.objects.filter(pk__in={t for t, _ in turn_heads.values()})}
    trace_turns: dict[int, list[TraceTurn]] = defaultdict(list)
    for turn in TraceTurn.objects.filter(trace_id__in=traces).order_by("trace_id", "index"):
        trace_turns[turn.trace_id].append(turn)
    curated = curated_items(project, ids[ItemKind.CURATED_TURN])
    for kind, object_id in chunk:
        if kind == ItemKind.EPISODE:
            episode = by_id.get(object_id)
            yield kind, EpisodeItem(episode, steps[object_id]) if episode else None
        elif kind == ItemKind.STEP and object_id in step_heads:
            episode_id, index = step_heads[object_id]
            cut = [s for s in steps[episode_id] if s.index <= index]
            yield kind, EpisodeItem(by_id[episode_id], cut) if episode_id in by_id else None
        elif kind == ItemKind.SCENARIO:
            yield kind, scenario_by_id.get(object_id)
        elif kind == ItemKind.TRACE_TURN and object_id in turn_heads:
            trace_id, index = turn_heads[object_id]
            kept = [t for t in trace_turns[trace_id] if t.index <= index]
            yield kind, TraceItem(traces[trace_id], kept)
        elif kind == ItemKind.CURATED_TURN:
            yield kind, curated.get(object_id)
        else:
            yield kind, None
