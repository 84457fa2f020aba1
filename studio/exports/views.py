from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.handlers.asgi import ASGIRequest
from django.core.paginator import Paginator
from django.db.models import Model
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from simulator.domains import domain_names
from simulator.perturbations import PERTURBATION_KINDS
from studio.core.access import get_for_member, get_project_for, projects_for
from studio.episodes.models import Episode, Step
from studio.errors import RejectedInput, StudioError
from studio.exports import selectors, services
from studio.exports.importing import ImportRejected, import_path
from studio.exports.models import Collection, ExportFormat, ExportJob, ExportLayout, ItemKind
from studio.traces.models import TraceTurn
from studio.worlds.models import Scenario

KIND_OBJECTS: dict[str, Any] = {
    ItemKind.EPISODE: (Episode.objects.all(), "project"),
    ItemKind.STEP: (Step.objects.select_related("episode"), "episode__project"),
    ItemKind.SCENARIO: (Scenario.objects.all(), "project"),
    ItemKind.TRACE_TURN: (TraceTurn.objects.select_related("trace"), "trace__project"),
}


def _collection(request: HttpRequest, pk: int, *, edit: bool = False) -> Collection:
    return get_for_member(
        request.user, Collection.objects.select_related("project"), edit=edit, pk=pk
    )


def _project_of(obj: Model) -> Any:
    if isinstance(obj, Step):
        return obj.episode.project
    if isinstance(obj, TraceTurn):
        return obj.trace.project
    return obj.project  # type: ignore[attr-defined]


def _object(request: HttpRequest, kind: str, object_id: str) -> Model:
    if kind not in KIND_OBJECTS or not object_id.isdigit():
        raise Http404("Not found")
    queryset, project_path = KIND_OBJECTS[kind]
    obj: Model | None = (
        queryset.filter(pk=int(object_id), **{f"{project_path}__memberships__user": request.user})
        .distinct()
        .first()
    )
    if obj is None:
        raise Http404("Not found")
    return obj


@require_GET
@login_required
def collection_list(request: HttpRequest) -> HttpResponse:
    slug = request.GET.get("project", "")
    project = get_project_for(request.user, slug)[0] if slug else None
    return render(
        request,
        "exports/collection_list.html",
        {
            "collections": selectors.collections_for(user=request.user, project=project),
            "projects": projects_for(request.user),
            "project": project,
        },
    )


@require_POST
@login_required
def collection_create(request: HttpRequest) -> HttpResponse:
    project, _ = get_project_for(request.user, request.POST.get("project", ""), edit=True)
    try:
        collection = services.collection_create(
            project=project,
            name=request.POST.get("name", ""),
            description=request.POST.get("description", ""),
            user=request.user,
        )
    except StudioError as exc:
        messages.error(request, str(exc))
        return redirect("exports:list")
    return redirect("exports:detail", pk=collection.pk)


@require_GET
@login_required
def collection_detail(request: HttpRequest, pk: int) -> HttpResponse:
    collection = _collection(request, pk)
    return render(
        request,
        "exports/collection_detail.html",
        {
            "collection": collection,
            "rows": selectors.collection_rows(collection=collection),
            "counts": selectors.item_counts(collection=collection),
            "jobs": selectors.export_jobs(collection=collection),
            "formats": ExportFormat.choices,
            "layouts": ExportLayout.choices,
            "stream_max": services.STREAM_MAX_ITEMS,
        },
    )


@require_POST
@login_required
def collection_delete(request: HttpRequest, pk: int) -> HttpResponse:
    collection = _collection(request, pk, edit=True)
    services.collection_delete(collection=collection)
    messages.success(request, f"Deleted the collection {collection.name}.")
    return redirect("exports:list")


@require_POST
@login_required
def item_remove(request: HttpRequest, pk: int) -> HttpResponse:
    collection = _collection(request, pk, edit=True)
    object_id = request.POST.get("object_id", "")
    if object_id.isdigit():
        services.collection_remove_item(
            collection=collection, kind=request.POST.get("kind", ""), object_id=int(object_id)
        )
    if request.headers.get("HX-Request"):
        return HttpResponse("")
    return redirect("exports:detail", pk=pk)


@require_GET
@login_required
@vary_on_headers("HX-Request")
def browse(request: HttpRequest) -> HttpResponse:
    projects = projects_for(request.user)
    slug = request.GET.get("project", "") or (projects.values_list("slug", flat=True).first() or "")
    if not slug:
        return render(request, "exports/browse.html", {"projects": projects, "project": None})
    project, membership = get_project_for(request.user, slug)
    item_filter = selectors.ItemFilter.from_query(request.GET)
    matches = selectors.filtered_items(project=project, item_filter=item_filter)
    page = Paginator(matches, selectors.BROWSE_LIMIT).get_page(request.GET.get("page"))
    context = {
        "projects": projects,
        "project": project,
        "can_edit": membership.can_edit,
        "filter": item_filter,
        "page": page,
        "kinds": ItemKind.choices,
        "worlds": selectors.worlds_of(project=project),
        "collections": selectors.collection_choices(project=project),
        "domains": domain_names(),
        "perturbation_kinds": _perturbation_kinds(),
    }
    if request.headers.get("HX-Request"):
        return render(request, "exports/_browse-results.html", context)
    return render(request, "exports/browse.html", context)


def _perturbation_kinds() -> list[str]:
    return list(PERTURBATION_KINDS)


def _target_collection(request: HttpRequest, project: Any) -> Collection:
    """The chosen collection, or a new one named in the form."""
    new_name = request.POST.get("new_name", "").strip()
    if new_name:
        return services.collection_get_or_create(project=project, name=new_name, user=request.user)
    chosen = request.POST.get("collection", "")
    collection = Collection.objects.filter(
        project=project, pk=int(chosen) if chosen.isdigit() else 0
    ).first()
    if collection is None:
        raise RejectedInput("choose a collection or name a new one")
    return collection


@require_POST
@login_required
def add_filtered(request: HttpRequest) -> HttpResponse:
    project, _ = get_project_for(request.user, request.POST.get("project", ""), edit=True)
    item_filter = selectors.ItemFilter.from_query(request.POST)
    try:
        collection = _target_collection(request, project)
        selected = [v for v in request.POST.getlist("selected") if v.isdigit()]
        if request.POST.get("only_selected"):
            added = services.collection_add_items(
                collection=collection, items=[(item_filter.kind, int(v)) for v in selected]
            )
        else:
            added = services.collection_add_filtered(collection=collection, item_filter=item_filter)
    except StudioError as exc:
        messages.error(request, str(exc))
        return redirect(f"/collections/browse/?project={project.slug}&{item_filter.querystring()}")
    messages.success(request, f"Added {added} item(s) to {collection.name}.")
    return redirect("exports:detail", pk=collection.pk)


@require_GET
@login_required
def add_form(request: HttpRequest) -> HttpResponse:
    """The "add to collection" control (lazy-loaded by ``exports/_add-to-collection.html``)."""
    kind, object_id = request.GET.get("kind", ""), request.GET.get("object_id", "")
    obj = _object(request, kind, object_id)
    project = _project_of(obj)
    return render(
        request,
        "exports/_add-form.html",
        {
            "kind": kind,
            "object_id": obj.pk,
            "collections": selectors.collection_choices(project=project),
        },
    )


@require_POST
@login_required
def add_item(request: HttpRequest) -> HttpResponse:
    kind, object_id = request.POST.get("kind", ""), request.POST.get("object_id", "")
    obj = _object(request, kind, object_id)
    project, _ = get_project_for(request.user, _project_of(obj).slug, edit=True)
    context: dict[str, Any] = {"kind": kind, "object_id": obj.pk}
    try:
        collection = _target_collection(request, project)
        added = services.collection_add_items(collection=collection, items=[(kind, obj.pk)])
        context["message"] = (
            f"Added to {collection.name}." if added else f"Already in {collection.name}."
        )
        context["added_to"] = collection
    except StudioError as exc:
        context["error"] = str(exc)
    context["collections"] = selectors.collection_choices(project=project)
    return render(request, "exports/_add-form.html", context)


def _next_or(chunks: Iterator[bytes], default: object) -> object:
    return next(chunks, default)


async def _async_chunks(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    """Pull a sync generator chunk by chunk on the request's sync thread (constant memory
    under ASGI, where a sync iterator would be read whole into a list first)."""
    done = object()
    while True:
        chunk = await sync_to_async(_next_or)(chunks, done)
        if chunk is done:
            break
        assert isinstance(chunk, bytes)
        yield chunk


@require_POST
@login_required
def export(request: HttpRequest, pk: int) -> HttpResponse | StreamingHttpResponse:
    collection = _collection(request, pk)
    format = request.POST.get("format", "")
    layout = request.POST.get("layout", ExportLayout.FILE)
    kwargs: dict[str, Any] = {
        "collection": collection,
        "format": format,
        "layout": layout,
        "include_reasoning": request.POST.get("include_reasoning") == "on",
        "parquet": request.POST.get("parquet") == "on",
        "user": request.user,
    }
    if format not in ExportFormat.values or layout not in ExportLayout.values:
        messages.error(request, "Choose a format and a layout.")
        return redirect("exports:detail", pk=pk)
    if services.export_should_stream(collection=collection, layout=layout):
        job = services.export_create(**kwargs, streamed=True)
        chunks = services.export_stream(job=job)
        content: Any = _async_chunks(chunks) if isinstance(request, ASGIRequest) else chunks
        response = StreamingHttpResponse(content, content_type="application/x-ndjson")
        response["Content-Disposition"] = f'attachment; filename="{services.export_filename(job)}"'
        return response
    job = services.export_start(**kwargs)
    return redirect("exports:job", job_id=job.pk)


@require_GET
@login_required
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_for_member(
        request.user, ExportJob.objects.select_related("collection", "project"), pk=job_id
    )
    return render(request, "exports/job_detail.html", {"job": job})


@require_GET
@login_required
def job_download(request: HttpRequest, job_id: int) -> FileResponse:
    job = get_for_member(request.user, ExportJob.objects.select_related("collection"), pk=job_id)
    path = services.export_file_path(job)
    if path is None:
        raise Http404("The export file is not there")
    return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name)


@require_GET
@login_required
def job_manifest(request: HttpRequest, job_id: int) -> JsonResponse:
    job = get_for_member(request.user, ExportJob.objects.all(), pk=job_id)
    if not job.manifest:
        raise Http404("No manifest yet")
    return JsonResponse(job.manifest, json_dumps_params={"ensure_ascii": False, "indent": 2})


@require_POST
@login_required
def import_upload(request: HttpRequest) -> HttpResponse:
    project, _ = get_project_for(request.user, request.POST.get("project", ""), edit=True)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a file to import.")
        return redirect("exports:list")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / Path(upload.name or "upload.jsonl").name
        with open(path, "wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        try:
            result = import_path(
                project=project,
                path=path,
                user=request.user,
                collection_name=request.POST.get("collection", ""),
            )
        except ImportRejected as exc:
            for problem in exc.problems[:10]:
                messages.error(request, problem)
            if len(exc.problems) > 10:
                messages.error(request, f"… and {len(exc.problems) - 10} more problems.")
            return redirect("exports:list")
        except StudioError as exc:
            messages.error(request, str(exc))
            return redirect("exports:list")
    messages.success(request, f"{result.summary()}.")
    return redirect("exports:detail", pk=result.collection.pk)
