"""Reads for collections: lists, the filtered browse view, item summaries, export jobs."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import date
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as AuthUser
from django.db.models import Count, Model, Q, QuerySet
from django.http import QueryDict

from studio.core.access import projects_for
from studio.core.models import Project
from studio.episodes.models import Episode, Step, StepStatus
from studio.exports.curation import curation_of
from studio.exports.models import Collection, CollectionItem, ExportJob, ItemKind
from studio.traces.models import Annotation, TraceTurn
from studio.worlds.models import Scenario, World

User = AuthUser | AnonymousUser
BROWSE_LIMIT = 100
ITEMS_SHOWN = 200


@dataclass(frozen=True)
class ItemFilter:
    """What the browse page filters on; stored with a collection when items are added from it.

    ``score_min``/``score_max`` are step rewards for episodes and steps, and the judge's
    total score (0–100) for trace turns; ``verdict`` is a reviewer's verdict on a trace
    turn's simulation; ``tags`` match episode metadata tags and annotation tags.
    """

    kind: str = ItemKind.EPISODE
    domain: str = ""
    world: str = ""
    perturbation: str = ""
    score_min: str = ""
    score_max: str = ""
    verdict: str = ""
    tags: str = ""
    date_from: str = ""
    date_to: str = ""

    @classmethod
    def from_query(cls, query: QueryDict | dict[str, Any]) -> ItemFilter:
        values = {f.name: str(query.get(f.name, "") or "").strip() for f in fields(cls)}
        if values["kind"] not in ItemKind.values:
            values["kind"] = ItemKind.EPISODE
        return cls(**values)

    def to_dict(self) -> dict[str, str]:
        """The non-empty criteria (``kind`` always)."""
        return {k: v for k, v in asdict(self).items() if v or k == "kind"}

    def querystring(self) -> str:
        return urlencode(self.to_dict())


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _kind_text(kind: str) -> str:
    return f'"kind": "{kind}"'


def filtered_items(*, project: Project, item_filter: ItemFilter) -> QuerySet[Any]:
    """The project's objects of ``item_filter.kind`` that match it, newest first."""
    f = item_filter
    low, high = _number(f.score_min), _number(f.score_max)
    tags = [t.strip() for t in f.tags.split(",") if t.strip()]
    day_from, day_to = _day(f.date_from), _day(f.date_to)
    qs: QuerySet[Any]
    if f.kind == ItemKind.SCENARIO:
        qs = Scenario.objects.filter(project=project).select_related("world")
        if f.domain:
            qs = qs.filter(world__domain=f.domain)
        if f.world:
            qs = qs.filter(world_id=f.world)
        if f.perturbation:
            qs = qs.filter(spec__perturbations__icontains=_kind_text(f.perturbation))
    elif f.kind == ItemKind.TRACE_TURN:
        qs = TraceTurn.objects.filter(trace__project=project).select_related("trace")
        if f.domain:
            qs = qs.filter(trace__domain=f.domain)
        if low is not None:
            qs = qs.filter(simulated__judge_scores__total_score__gte=low)
        if high is not None:
            qs = qs.filter(simulated__judge_scores__total_score__lte=high)
        if f.verdict:
            qs = qs.filter(simulated__annotations__verdict=f.verdict)
        for tag in tags:
            qs = qs.filter(simulated__annotations__tags__icontains=tag)
        if f.perturbation:
            qs = qs.filter(simulated__firings__icontains=_kind_text(f.perturbation))
        created = "trace__created_at"
    elif f.kind == ItemKind.STEP:
        qs = Step.objects.filter(episode__project=project, status=StepStatus.DONE).select_related(
            "episode"
        )
        if f.domain:
            qs = qs.filter(episode__domain=f.domain)
        if f.world:
            qs = qs.filter(episode__world_revision__world_id=f.world)
        if f.perturbation:
            qs = qs.filter(firings__icontains=_kind_text(f.perturbation))
        if low is not None:
            qs = qs.filter(reward__gte=low)
        if high is not None:
            qs = qs.filter(reward__lte=high)
        for tag in tags:
            qs = qs.filter(episode__metadata__tags__icontains=tag)
    else:
        qs = Episode.objects.filter(project=project).select_related("world_revision__world")
        if f.domain:
            qs = qs.filter(domain=f.domain)
        if f.world:
            qs = qs.filter(world_revision__world_id=f.world)
        if f.perturbation:
            text = _kind_text(f.perturbation)
            qs = qs.filter(Q(perturbations__icontains=text) | Q(steps__firings__icontains=text))
        if low is not None:
            qs = qs.filter(steps__reward__gte=low)
        if high is not None:
            qs = qs.filter(steps__reward__lte=high)
        for tag in tags:
            qs = qs.filter(metadata__tags__icontains=tag)
    if f.kind != ItemKind.TRACE_TURN:
        created = "created_at"
    if day_from is not None:
        qs = qs.filter(**{f"{created}__date__gte": day_from})
    if day_to is not None:
        qs = qs.filter(**{f"{created}__date__lte": day_to})
    return qs.distinct().order_by(f"-{created}", "-pk")


def collections_for(*, user: User, project: Project | None = None) -> QuerySet[Collection]:
    qs = Collection.objects.filter(project__in=projects_for(user))
    if project is not None:
        qs = qs.filter(project=project)
    return qs.select_related("project").annotate(item_count=Count("items"))


def collection_choices(*, project: Project) -> QuerySet[Collection]:
    return Collection.objects.filter(project=project).order_by("name")


def worlds_of(*, project: Project) -> QuerySet[World]:
    return World.objects.filter(project=project).order_by("title")


@dataclass(frozen=True)
class ItemRow:
    item: CollectionItem
    label: str
    detail: str
    gone: bool = False


def _label(kind: str, obj: Model | None) -> tuple[str, str]:
    if isinstance(obj, Episode):
        return obj.title, obj.domain
    if isinstance(obj, Step):
        return f"{obj.episode.title} · step {obj.index}", obj.episode.domain
    if isinstance(obj, Scenario):
        return obj.title, obj.world.domain
    if isinstance(obj, TraceTurn):
        return f"{obj.trace.title} · turn {obj.index}", obj.trace.domain
    if isinstance(obj, Annotation):
        turn, how = obj.simulated_turn, curation_of(obj) or "no longer curated"
        label = f"{turn.simulation.trace.title} · turn {turn.index} · {how} by {obj.user}"
        return label, turn.simulation.trace.domain
    return "(deleted)", kind


def collection_rows(*, collection: Collection, limit: int = ITEMS_SHOWN) -> list[ItemRow]:
    """The first ``limit`` items with a label each (one query per kind)."""
    items = list(collection.items.order_by("id")[:limit])
    ids: dict[str, list[int]] = {}
    for item in items:
        ids.setdefault(item.kind, []).append(item.object_id)
    project = collection.project
    objects: dict[tuple[str, int], Model] = {}
    lookups: list[tuple[str, QuerySet[Any]]] = [
        (ItemKind.EPISODE, Episode.objects.filter(project=project)),
        (ItemKind.STEP, Step.objects.filter(episode__project=project).select_related("episode")),
        (ItemKind.SCENARIO, Scenario.objects.filter(project=project).select_related("world")),
        (
            ItemKind.TRACE_TURN,
            TraceTurn.objects.filter(trace__project=project).select_related("trace"),
        ),
        (
            ItemKind.CURATED_TURN,
            Annotation.objects.filter(simulated_turn__simulation__project=project).select_related(
                "user", "simulated_turn__simulation__trace"
            ),
        ),
    ]
    for kind, qs in lookups:
        for obj in qs.filter(pk__in=ids.get(kind, [])):
            objects[(kind, obj.pk)] = obj
    rows = []
    for item in items:
        obj = objects.get((item.kind, item.object_id))
        label, detail = _label(item.kind, obj)
        rows.append(ItemRow(item, label, detail, gone=obj is None))
    return rows


def item_counts(*, collection: Collection) -> dict[str, int]:
    counts = collection.items.values("kind").annotate(n=Count("id")).order_by("kind")
    return {row["kind"]: row["n"] for row in counts}


def export_jobs(*, collection: Collection) -> QuerySet[ExportJob]:
    return collection.exports.all()[:20]
