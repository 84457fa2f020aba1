from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from simulator.render import render_terminal
from studio.core.access import (
    EDIT_ROLES,
    get_for_member,
    get_project_for,
    membership_for,
    projects_for,
)
from studio.core.models import ModelEndpoint, Project
from studio.errors import StudioError
from studio.lib.render_response import observation_response, sandboxed_document_response
from studio.lib.tasks import dispatch
from studio.traces import (
    score_charts,
    selectors,
    services,
    trajectory_judging,
    turn_judging,
)
from studio.traces.models import (
    ImportJob,
    SimulatedTurn,
    Simulation,
    SimulationMode,
    Trace,
)
from studio.traces.queues import queue_for
from studio.traces.tasks import judge_simulation, judge_trajectory, run_import
from studio.worlds.models import Scenario


def _project(request: HttpRequest, *, edit: bool = False) -> Project:
    slug = request.GET.get("project") or request.POST.get("project")
    if not slug:
        first = projects_for(request.user).first()
        if first is None:
            raise Http404("You are not a member of any project")
        slug = first.slug
    project, _ = get_project_for(request.user, slug, edit=edit)
    return project


def _can_edit(request: HttpRequest, project: Project) -> bool:
    membership = membership_for(request.user, project)
    return membership is not None and membership.role in EDIT_ROLES


@require_GET
@login_required
def trace_list(request: HttpRequest) -> HttpResponse:
    project = _project(request)
    return render(
        request,
        "traces/trace_list.html",
        {
            "project": project,
            "projects": projects_for(request.user),
            "traces": selectors.trace_list(project=project),
            "imports": selectors.import_list(project=project),
            "can_edit": _can_edit(request, project),
            "max_bytes": settings.STUDIO_MAX_UPLOAD_BYTES,
        },
    )


@require_POST
@login_required
def import_upload(request: HttpRequest) -> HttpResponse:
    project = _project(request, edit=True)
    upload = request.FILES.get("file")
    if upload is None:
        return HttpResponseBadRequest("Choose a JSONL file to import")
    back = f"{reverse('traces:list')}?project={project.slug}"
    if upload.size is not None and upload.size > settings.STUDIO_MAX_UPLOAD_BYTES:
        messages.error(
            request, f"{upload.name} is larger than {settings.STUDIO_MAX_UPLOAD_BYTES} bytes"
        )
        return redirect(back)
    folder = settings.VAR_DIR / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}.jsonl"
    with open(path, "wb") as sink:
        for chunk in upload.chunks():
            sink.write(chunk)
    job = services.import_job_create(
        project=project,
        path=path,
        filename=upload.name or "upload.jsonl",
        user=request.user,
        partial=request.POST.get("partial") == "1",
    )
    dispatch(run_import, job.pk)
    return redirect("traces:import", pk=job.pk)


@require_GET
@login_required
def import_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_for_member(request.user, ImportJob.objects.all(), pk=pk)
    return render(request, "traces/import_detail.html", {"job": job, "project": job.project})


@require_GET
@login_required
def trace_detail(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_for_member(request.user, Trace.objects.all(), pk=pk)
    return render(
        request,
        "traces/trace_detail.html",
        {
            "trace": trace,
            "project": trace.project,
            "turns": trace.turns.all(),
            "simulations": trace.simulations.all(),
            "modes": SimulationMode.choices,
            "scenarios": Scenario.objects.filter(project=trace.project, archived=False),
            "endpoints": ModelEndpoint.objects.filter(project__in=[trace.project])
            | ModelEndpoint.objects.filter(project__isnull=True),
            "can_edit": _can_edit(request, trace.project),
        },
    )


@require_POST
@login_required
def trace_simulate(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_for_member(request.user, Trace.objects.all(), edit=True, pk=pk)
    mode = request.POST.get("mode", SimulationMode.TEACHER_FORCED)
    if mode not in SimulationMode.values:
        return HttpResponseBadRequest("Unknown mode")
    scenario = None
    if request.POST.get("scenario"):
        scenario = Scenario.objects.filter(
            project=trace.project, pk=request.POST["scenario"]
        ).first()
        if scenario is None:
            raise Http404("No such scenario")
    endpoint = None
    if request.POST.get("endpoint"):
        endpoint = (
            ModelEndpoint.objects.filter(pk=request.POST["endpoint"])
            .filter(project__in=[trace.project])
            .first()
            or ModelEndpoint.objects.filter(
                pk=request.POST["endpoint"], project__isnull=True
            ).first()
        )
        if endpoint is None:
            raise Http404("No such endpoint")
    simulation = services.simulation_create(
        trace=trace,
        user=request.user,
        mode=mode,
        scenario=scenario,
        endpoint=endpoint,
    )
    return redirect("traces:review", pk=simulation.pk)


def _review_context(request: HttpRequest, simulation: Simulation, index: int) -> dict[str, Any]:
    turns = selectors.simulation_turns(simulation=simulation)
    current = next((t["turn"] for t in turns if t["turn"].index == index), None)
    if current is None and turns:
        current = turns[0]["turn"]
    return {
        "simulation": simulation,
        "trace": simulation.trace,
        "project": simulation.project,
        "turns": turns,
        "total": simulation.trace.turns.count(),
        "review": selectors.turn_review(turn=current, user=request.user) if current else None,
        "trajectory": trajectory_judging.trajectory_card(simulation),
        "dimensions": ["format", "factuality", "consistency", "realism", "quality"],
        "can_edit": _can_edit(request, simulation.project),
        "endpoints": ModelEndpoint.objects.filter(project__in=[simulation.project])
        | ModelEndpoint.objects.filter(project__isnull=True),
    }


@require_GET
@login_required
@vary_on_headers("HX-Request")
def review(request: HttpRequest, pk: int) -> HttpResponse:
    simulation = get_for_member(request.user, Simulation.objects.select_related("trace"), pk=pk)
    try:
        index = int(request.GET.get("turn", "1"))
    except ValueError:
        index = 1
    context = _review_context(request, simulation, index)
    if request.headers.get("HX-Request"):
        return render(request, "traces/_turn-review.html", context)
    context["queue"] = queue_for(user=request.user, queue_id=request.GET.get("queue", ""))
    return render(request, "traces/review.html", context)


def _judge_endpoint_id(request: HttpRequest, simulation: Simulation) -> int | None:
    """The judge endpoint chosen in the form: the project's or a site-wide one."""
    endpoint_id = request.POST.get("endpoint") or None
    if endpoint_id and not (
        ModelEndpoint.objects.filter(pk=endpoint_id, project=simulation.project).exists()
        or ModelEndpoint.objects.filter(pk=endpoint_id, project__isnull=True).exists()
    ):
        raise Http404("No such endpoint")
    return int(endpoint_id) if endpoint_id else None


@require_POST
@login_required
def simulation_judge(request: HttpRequest, pk: int) -> HttpResponse:
    simulation = get_for_member(request.user, Simulation.objects.all(), edit=True, pk=pk)
    endpoint_id = _judge_endpoint_id(request, simulation)
    turing = request.POST.get("turing") == "1"
    dispatch(judge_simulation, simulation.pk, endpoint_id, turing)
    messages.success(request, "The judge is running; its scores appear beside each turn.")
    return redirect("traces:review", pk=simulation.pk)


@require_POST
@login_required
def simulation_judge_trajectory(request: HttpRequest, pk: int) -> HttpResponse:
    simulation = get_for_member(request.user, Simulation.objects.all(), edit=True, pk=pk)
    dispatch(judge_trajectory, simulation.pk, _judge_endpoint_id(request, simulation))
    messages.success(request, "The trajectory judge is running; its verdict appears below.")
    return redirect("traces:review", pk=simulation.pk)


def _simulated_turn(request: HttpRequest, pk: int, *, edit: bool = False) -> SimulatedTurn:
    turn = SimulatedTurn.objects.select_related("simulation__trace", "turn").filter(pk=pk).first()
    if turn is None:
        raise Http404("Not found")
    get_for_member(request.user, Simulation.objects.all(), edit=edit, pk=turn.simulation_id)
    return turn


@require_POST
@login_required
def annotate(request: HttpRequest, pk: int) -> HttpResponse:
    turn = _simulated_turn(request, pk, edit=True)
    data = {k: v for k, v in request.POST.items() if k != "csrfmiddlewaretoken"}
    try:
        services.annotation_save(turn=turn, user=request.user, data=data)
    except StudioError as exc:
        return HttpResponseBadRequest(str(exc))
    turn_judging.publish_turn_badges(turn)  # other open review pages see the verdict
    context = _review_context(request, turn.simulation, turn.index)
    return render(request, "traces/_annotation.html", context)


@require_GET
@login_required
def render_side(request: HttpRequest, pk: int, side: str) -> HttpResponse:
    """A real or simulated observation as a sandboxed document (for GUI domains)."""
    turn = _simulated_turn(request, pk)
    if side not in ("real", "simulated"):
        raise Http404("No such side")
    text = turn.turn.observation if side == "real" else turn.observation
    try:
        return observation_response(turn.simulation.trace.domain, text, title=side)
    except ValueError:  # a domain this studio does not know: the text as a terminal shows it
        return sandboxed_document_response(render_terminal(text, title=side))


@require_GET
@login_required
def queue(request: HttpRequest) -> HttpResponse:
    project = _project(request)
    return render(
        request,
        "traces/queue.html",
        {"project": project, "turns": selectors.annotation_queue(project=project)[:200]},
    )


@require_GET
@login_required
def stats(request: HttpRequest) -> HttpResponse:
    project = _project(request)
    agg = selectors.aggregates(project=project)
    charts = score_charts.score_charts(project=project, aggregates=agg)
    return render(request, "traces/stats.html", {"project": project, "agg": agg, "charts": charts})
