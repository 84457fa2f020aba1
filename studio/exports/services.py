"""Writes for collections and exports. Views, the CLI, rollouts and tasks call these.

Small exports stream straight into the HTTP response; large ones (and every
dataset layout) run as a task that writes under ``settings.VAR_DIR / "exports"``
and publishes its progress to the job's channel group. Both use the same writer
(``studio.exports.writing``), which keeps memory flat in the number of rows.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from studio.core.models import Project
from studio.episodes.models import Episode, Step
from studio.errors import NotFound, RejectedInput
from studio.exports.items import collection_pairs, resolve
from studio.exports.models import (
    Collection,
    CollectionItem,
    ExportJob,
    ExportLayout,
    ExportStatus,
    ItemKind,
)
from studio.exports.selectors import ItemFilter, filtered_items
from studio.exports.writing import (
    FORMATS,
    ExportWriter,
    HashingSink,
    dump_manifest,
    manifest,
    stream_bytes,
    write_hf_layout,
    write_jsonl,
)
from studio.lib.channels import PROGRESS, send_to_group
from studio.lib.tasks import dispatch
from studio.traces.models import Annotation, TraceTurn
from studio.worlds.models import Scenario

User = AbstractBaseUser | AnonymousUser | None
#: Collections with at most this many items download directly; larger ones run as a task.
STREAM_MAX_ITEMS = 500
PROGRESS_EVERY_S = 0.25
BULK_LIMIT = 50_000


def _user(user: User) -> Any:
    return user if user is not None and user.is_authenticated else None


def exports_dir() -> Path:
    path = Path(settings.VAR_DIR) / "exports"
    path.mkdir(parents=True, exist_ok=True)
    return path


# ── Collections ───────────────────────────────────────────────────────────────────


def collection_create(
    *, project: Project, name: str, description: str = "", user: User = None
) -> Collection:
    """A new collection; :class:`RejectedInput` when the name is empty or taken in the project."""
    name = name.strip()
    if not name:
        raise RejectedInput("a collection needs a name")
    if Collection.objects.filter(project=project, name=name).exists():
        raise RejectedInput(f"the project already has a collection called {name!r}")
    return Collection.objects.create(
        project=project, name=name[:120], description=description, created_by=_user(user)
    )


def collection_get_or_create(*, project: Project, name: str, user: User = None) -> Collection:
    collection = Collection.objects.filter(project=project, name=name.strip()).first()
    return collection or collection_create(project=project, name=name, user=user)


_MODELS: dict[str, Any] = {
    ItemKind.EPISODE: (Episode, "project"),
    ItemKind.STEP: (Step, "episode__project"),
    ItemKind.SCENARIO: (Scenario, "project"),
    ItemKind.TRACE_TURN: (TraceTurn, "trace__project"),
    ItemKind.CURATED_TURN: (Annotation, "simulated_turn__simulation__project"),
}


def collection_add_items(*, collection: Collection, items: Iterable[tuple[str, int]]) -> int:
    """Add (kind, object id) pairs; returns how many were new.

    Kinds: "episode", "step", "scenario", "trace_turn", "curated_turn". An unknown kind or an object
    of another project raises :class:`RejectedInput` (nothing is added); items already
    there are skipped.
    """
    wanted: dict[str, list[int]] = {}
    order: list[tuple[str, int]] = []
    for kind, object_id in items:
        if kind not in _MODELS:
            raise RejectedInput(f"unknown item kind {kind!r}")
        wanted.setdefault(kind, []).append(int(object_id))
        order.append((kind, int(object_id)))
    for kind, ids in wanted.items():
        model, project_path = _MODELS[kind]
        found = set(
            model.objects.filter(pk__in=ids, **{project_path: collection.project}).values_list(
                "pk", flat=True
            )
        )
        missing = set(ids) - found
        if missing:
            raise RejectedInput(f"no {kind} {sorted(missing)[0]} in this project")
    with transaction.atomic():
        before = collection.items.count()
        seen: set[tuple[str, int]] = set()
        new = []
        existing = {
            (k, o)
            for k, o in collection.items.filter(kind__in=list(wanted)).values_list(
                "kind", "object_id"
            )
        }
        for pair in order:
            if pair in existing or pair in seen:
                continue
            seen.add(pair)
            new.append(CollectionItem(collection=collection, kind=pair[0], object_id=pair[1]))
        CollectionItem.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
        collection.save(update_fields=["updated_at"])
        return collection.items.count() - before


def collection_add_filtered(*, collection: Collection, item_filter: ItemFilter) -> int:
    """Add every object the filter matches (up to :data:`BULK_LIMIT`) and remember the filter."""
    matches = filtered_items(project=collection.project, item_filter=item_filter)
    ids = list(matches.values_list("pk", flat=True)[:BULK_LIMIT])
    ids.reverse()  # oldest first, so the collection reads in the order things happened
    added = collection_add_items(collection=collection, items=((item_filter.kind, i) for i in ids))
    collection.filters = [*collection.filters, {"filter": item_filter.to_dict(), "added": added}]
    collection.save(update_fields=["filters", "updated_at"])
    return added


def collection_remove_item(*, collection: Collection, kind: str, object_id: int) -> None:
    collection.items.filter(kind=kind, object_id=object_id).delete()
    collection.save(update_fields=["updated_at"])


def collection_delete(*, collection: Collection) -> None:
    collection.delete()


# ── Exports ───────────────────────────────────────────────────────────────────────


def _options(include_reasoning: bool, parquet: bool) -> dict[str, bool]:
    return {"include_reasoning": include_reasoning, "parquet": parquet}


def export_create(
    *,
    collection: Collection,
    format: str,
    layout: str = ExportLayout.FILE,
    include_reasoning: bool = False,
    parquet: bool = False,
    user: User = None,
    streamed: bool = False,
) -> ExportJob:
    if format not in FORMATS:
        raise RejectedInput(f"unknown format {format!r}")
    if layout not in ExportLayout.values:
        raise RejectedInput(f"unknown layout {layout!r}")
    return ExportJob.objects.create(
        project=collection.project,
        collection=collection,
        format=format,
        layout=layout,
        options=_options(include_reasoning, parquet and layout == ExportLayout.HF),
        filters=collection.filters,
        streamed=streamed,
        items_total=collection.items.count(),
        created_by=_user(user),
    )


def export_should_stream(*, collection: Collection, layout: str) -> bool:
    return layout == ExportLayout.FILE and collection.items.count() <= STREAM_MAX_ITEMS


def export_start(**kwargs: Any) -> ExportJob:
    """Create a background export (same arguments as :func:`export_create`) and dispatch it."""
    # A real cycle: the task module runs this module's export_run.
    from studio.exports.tasks import run_export

    job = export_create(**kwargs)
    dispatch(run_export, job.pk)
    return job


def export_filename(job: ExportJob) -> str:
    collection = job.collection.name if job.collection else "export"
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in collection).strip("-")
    suffix = ".zip" if job.layout == ExportLayout.HF else ".jsonl"
    return f"{stem or 'export'}-{job.format}{suffix}"


def _manifest_for(
    job: ExportJob, writer: ExportWriter, files: list[dict[str, Any]]
) -> dict[str, Any]:
    return manifest(
        format=job.format,
        layout=job.layout,
        counts=writer.counts,
        files=files,
        project=job.project.slug,
        collection=job.collection.name if job.collection else "",
        filters=job.filters,
        options=job.options,
        provenance=writer.provenance,
    )


def export_stream(*, job: ExportJob) -> Iterator[bytes]:
    """The export's bytes for a streaming download; the job is finished when they run out."""
    assert job.collection is not None
    writer = ExportWriter(job.format, include_reasoning=bool(job.options.get("include_reasoning")))
    sink = HashingSink()
    ExportJob.objects.filter(pk=job.pk).update(status=ExportStatus.RUNNING)
    resolved = resolve(job.project, collection_pairs(job.collection))
    yield from stream_bytes(writer, resolved, sink)
    job.manifest = _manifest_for(job, writer, [sink.entry(export_filename(job))])
    job.status = ExportStatus.DONE
    job.items_done = job.items_total
    job.finished_at = timezone.now()
    job.save(update_fields=["manifest", "status", "items_done", "finished_at"])


def export_to_path(
    *,
    collection: Collection,
    format: str,
    out: Path,
    layout: str = ExportLayout.FILE,
    include_reasoning: bool = False,
    parquet: bool = False,
    on_item: Any = None,
    filters: list[Any] | None = None,
) -> dict[str, Any]:
    """Write a collection to ``out`` (a JSONL file, a dataset zip, or a dataset folder) and
    ``<out>.manifest.json`` beside it; returns the manifest."""
    writer = ExportWriter(format, include_reasoning=include_reasoning, on_item=on_item)
    resolved = resolve(collection.project, collection_pairs(collection))
    out.parent.mkdir(parents=True, exist_ok=True)
    if layout == ExportLayout.HF:
        files = write_hf_layout(writer, resolved, out, name=collection.name, parquet=parquet)
    else:
        files = [write_jsonl(writer, resolved, out)]
    data = manifest(
        format=format,
        layout=layout,
        counts=writer.counts,
        files=files,
        project=collection.project.slug,
        collection=collection.name,
        filters=collection.filters if filters is None else filters,
        options=_options(include_reasoning, parquet),
        provenance=writer.provenance,
    )
    manifest_path(out).write_text(dump_manifest(data), encoding="utf-8")
    return data


def manifest_path(out: Path) -> Path:
    return out.with_name(out.name + ".manifest.json")


def export_progress_html(job: ExportJob) -> str:
    return render_to_string("exports/_job-progress.html", {"job": job})


def publish_export(job: ExportJob) -> None:
    send_to_group(job.group_name, {"type": PROGRESS, "html": export_progress_html(job)})


def export_run(*, job_id: int) -> ExportJob | None:
    """The background export: claim the job, write the file, publish progress. Idempotent."""
    claimed = ExportJob.objects.filter(pk=job_id, status=ExportStatus.PENDING).update(
        status=ExportStatus.RUNNING
    )
    job = ExportJob.objects.select_related("project", "collection").get(pk=job_id)
    if not claimed:
        return None
    last = [0.0]

    def on_item(done: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            job.items_done = done
            ExportJob.objects.filter(pk=job.pk).update(items_done=done)
            publish_export(job)

    try:
        if job.collection is None:
            raise NotFound("the collection was deleted")
        relative = Path(f"{job.pk}") / export_filename(job)
        out = exports_dir() / relative
        data = export_to_path(
            collection=job.collection,
            format=job.format,
            out=out,
            layout=job.layout,
            include_reasoning=bool(job.options.get("include_reasoning")),
            parquet=bool(job.options.get("parquet")),
            on_item=on_item,
            filters=job.filters,
        )
    except Exception as exc:
        job.status = ExportStatus.FAILED
        job.error = f"{type(exc).__name__}: {exc}"
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "error", "finished_at"])
        publish_export(job)
        raise
    job.status = ExportStatus.DONE
    job.path = str(relative)
    job.manifest = data
    job.items_done = job.items_total
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "path", "manifest", "items_done", "finished_at"])
    publish_export(job)
    return job


def export_file_path(job: ExportJob) -> Path | None:
    """The finished file of a background export, if it is still there."""
    if job.status != ExportStatus.DONE or not job.path:
        return None
    path = (exports_dir() / job.path).resolve()
    if exports_dir().resolve() not in path.parents or not path.is_file():
        return None
    return path
