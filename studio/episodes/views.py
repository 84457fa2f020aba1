"""Episode pages: the list, a new episode, the live episode page, forks side by side.

Stepping happens over the WebSocket (consumers.py); the views here serve pages,
the composer's validation, live control (perturbations, the automatic agent) and
the fork/close/retry/cancel buttons. Each panel is one partial template, used
by the page, by its own htmx view and by the consumer.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from simulator.domains import domain_names, is_gui
from simulator.perturbations import PERTURBATION_KINDS
from simulator.prompting import domain_for
from studio.core.access import get_for_member, get_project_for, membership_for, projects_for
from studio.core.endpoints import is_demo_model
from studio.core.models import ModelEndpoint, Project
from studio.core.preload import embedded_model_state
from studio.episodes import services
from studio.episodes.composer import compose_action
from studio.episodes.fragments import controls_context, step_context, steps_context
from studio.episodes.models import Episode, EpisodeStatus, Step
from studio.episodes.selectors import backend_spec, episodes_for_user
from studio.errors import RejectedInput, StudioError, simulator_input
from studio.lib.render_response import on_render_origin
from studio.worlds.forms import perturbation_from_post
from studio.worlds.models import Scenario, World
from studio.worlds.selectors import start_groups


def _episode(request: HttpRequest, pk: int, *, edit: bool = False) -> Episode:
    episode: Episode = get_for_member(
        request.user,
        Episode.objects.select_related("project", "world_revision__world", "endpoint"),
        edit=edit,
        pk=pk,
    )
    return episode


def _can_edit(request: HttpRequest, episode: Episode) -> bool:
    membership = membership_for(request.user, episode.project)
    return bool(membership and membership.can_edit)


def _page_context(request: HttpRequest, episode: Episode) -> dict[str, Any]:
    can_edit = _can_edit(request, episode)
    steps = list(episode.steps.order_by("index"))
    return {
        **controls_context(episode, can_edit),
        "steps": steps_context(steps, can_edit),
        "gui": is_gui(episode.domain),
        "initial_url": on_render_origin(
            reverse("episodes:render-initial", kwargs={"pk": episode.pk})
        ),
        "has_initial": bool(episode.world_revision.spec.get("initial_observation")),
        "forks": episode.forks.all(),
        # The composer says whether the embedded model is still loading (never on a real model).
        "model_state": embedded_model_state() if is_demo_model(backend_spec(episode)) else None,
    }


# --- pages ---------------------------------------------------------------------------------


@require_GET
@login_required
@vary_on_headers("HX-Request")
def episode_list(request: HttpRequest) -> HttpResponse:
    project = None
    if request.GET.get("project"):
        project, _ = get_project_for(request.user, request.GET["project"])
    episodes = episodes_for_user(
        request.user,
        project=project,
        domain=request.GET.get("domain", ""),
        status=request.GET.get("status", ""),
    )[:200]
    context = {
        "episodes": episodes,
        "projects": projects_for(request.user),
        "domains": domain_names(),
        "statuses": EpisodeStatus.choices,
        "filters": request.GET,
    }
    if request.headers.get("HX-Request"):
        return render(request, "episodes/_list-table.html", context)
    return render(request, "episodes/episode_list.html", context)


@require_http_methods(["GET", "POST"])
@login_required
def episode_new(request: HttpRequest) -> HttpResponse:
    """The new-episode form, and its POST: also the target of the Start episode buttons on
    scenario and world pages, so every episode starts through the same checks."""
    projects = projects_for(request.user)
    preselected, preselected_project = _preselected(request, projects)
    slug = request.POST.get("project") or request.GET.get("project") or ""
    if not slug and preselected_project is not None:
        slug = preselected_project.slug
    elif not slug and projects.count() == 1:
        slug = projects.get().slug
    project = None
    if slug:
        # A POST writes, so it needs an edit role even when the project was only implied.
        project, _ = get_project_for(request.user, slug, edit=request.method == "POST")
    endpoints = (
        ModelEndpoint.objects.filter(Q(project=project) | Q(project=None)) if project else []
    )
    form = request.POST or request.GET
    context: dict[str, Any] = {
        "projects": projects,
        "project": project,
        "start_groups": start_groups(project=project) if project else [],
        "start": form.get("start") or preselected,
        "endpoints": endpoints,
        "form": form,
        "errors": [],
    }
    if request.method == "POST" and project is not None:
        try:
            with simulator_input():
                episode = _create_from_post(request, project)
        except StudioError as exc:
            context["errors"] = [str(exc)]
        else:
            return redirect("episodes:detail", pk=episode.pk)
    return render(request, "episodes/episode_new.html", context)


def _preselected(request: HttpRequest, projects: QuerySet[Project]) -> tuple[str, Project | None]:
    """The ``start`` value and its project for ``?scenario=ID`` or ``?world=ID``, so a link
    from a scenario or world opens the form on it; an id outside the user's projects
    preselects nothing rather than answering 404, as the form is still usable."""
    scenario_id = _int(request.GET.get("scenario"))
    if scenario_id is not None:
        scenario = Scenario.objects.filter(project__in=projects, pk=scenario_id).first()
        if scenario is not None:
            return f"scenario:{scenario.pk}", scenario.project
    world_id = _int(request.GET.get("world"))
    if world_id is not None:
        world = World.objects.filter(project__in=projects, pk=world_id).first()
        if world is not None:
            return f"world:{world.pk}", world.project
    return "", None


def _create_from_post(request: HttpRequest, project: Any) -> Episode:
    data = request.POST
    scenario = world_revision = endpoint = None
    source = data.get("start", "")
    if source.startswith("scenario:"):
        scenario = Scenario.objects.filter(project=project, pk=_int(source[9:]) or 0).first()
        if scenario is None:
            raise RejectedInput("no such scenario")
    elif source.startswith("world:"):
        world = World.objects.filter(project=project, pk=_int(source[6:]) or 0).first()
        if world is None or world.head is None:
            raise RejectedInput("no such world")
        world_revision = world.head
    else:
        raise RejectedInput("choose a scenario or a world to start from")
    if data.get("endpoint"):
        endpoint = (
            ModelEndpoint.objects.filter(Q(project=project) | Q(project=None))
            .filter(pk=_int(data["endpoint"]) or 0)
            .first()
        )
    agent = _agent_from_post(data) if data.get("agent_kind") else None
    return services.episode_create(
        project=project,
        user=request.user,
        scenario=scenario,
        world_revision=world_revision,
        seed=_int(data.get("seed")) or 0,
        agent=agent,
        title=data.get("title", "").strip(),
        endpoint=endpoint,
    )


def _agent_from_post(data: Any) -> dict[str, Any]:
    kind = data.get("agent_kind", "human")
    agent: dict[str, Any] = {"kind": kind}
    if kind in ("scripted", "replay"):
        agent["actions"] = [
            line.strip() for line in data.get("agent_actions", "").splitlines() if line.strip()
        ]
    if kind == "llm" and data.get("agent_endpoint", "").strip():
        agent["endpoint"] = data["agent_endpoint"].strip()
    return services.validate_agent(agent)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@require_GET
@login_required
def episode_detail(request: HttpRequest, pk: int) -> HttpResponse:
    episode = _episode(request, pk)
    return render(request, "episodes/episode_detail.html", _page_context(request, episode))


@require_GET
@login_required
def episode_compare(request: HttpRequest) -> HttpResponse:
    left = _episode(request, _int(request.GET.get("a")) or 0)
    right = _episode(request, _int(request.GET.get("b")) or 0)
    columns = []
    for episode in (left, right):
        steps = list(episode.steps.order_by("index"))
        columns.append({"episode": episode, "steps": [step_context(s, False) for s in steps]})
    return render(request, "episodes/episode_compare.html", {"columns": columns})


# --- the composer ----------------------------------------------------------------------------


@require_POST
@login_required
def episode_validate(request: HttpRequest, pk: int) -> HttpResponse:
    """The composer's live check: compose the action and parse it with the domain."""
    episode = _episode(request, pk)
    world = episode.world_revision.to_world()
    context: dict[str, Any] = {"error": "", "ok": False, "action": ""}
    try:
        with simulator_input():
            action = compose_action(world, request.POST)
            if action:
                domain_for(world).parse_action(action, world)
                context.update(ok=True, action=action)
    except StudioError as exc:
        context["error"] = str(exc)
    return render(request, "episodes/_validate.html", context)


# --- live control ----------------------------------------------------------------------------


def _controls(request: HttpRequest, episode: Episode, template: str, **extra: Any) -> HttpResponse:
    episode.refresh_from_db()
    context = {**controls_context(episode, _can_edit(request, episode)), **extra}
    return render(request, f"episodes/{template}", context)


@require_GET
@login_required
def perturbation_form(request: HttpRequest, pk: int) -> HttpResponse:
    episode = _episode(request, pk)
    kind = PERTURBATION_KINDS.get(request.GET.get("kind", ""))
    return render(request, "episodes/_perturbation-params.html", {"episode": episode, "kind": kind})


@require_POST
@login_required
def perturbation_add(request: HttpRequest, pk: int) -> HttpResponse:
    episode = _episode(request, pk, edit=True)
    kind = request.POST.get("kind", "")
    if kind not in PERTURBATION_KINDS:
        return _controls(request, episode, "_perturbations.html", problems=["Choose a kind."])
    parsed = perturbation_from_post(kind, request.POST)
    if not parsed.ok:
        problems = [f"{key}: {'; '.join(m)}" for key, m in parsed.errors.items()]
        return _controls(request, episode, "_perturbations.html", problems=problems)
    next_only = request.POST.get("scope") == "next"
    services.perturbation_add(episode=episode, perturbation=parsed.data, next_only=next_only)
    return _controls(request, episode, "_perturbations.html")


@require_POST
@login_required
def perturbation_toggle(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    episode = _episode(request, pk, edit=True)
    try:
        with simulator_input():
            services.perturbation_toggle(episode=episode, index=index)
    except StudioError as exc:
        return HttpResponseBadRequest(str(exc))
    return _controls(request, episode, "_perturbations.html")


@require_POST
@login_required
def agent_update(request: HttpRequest, pk: int) -> HttpResponse:
    episode = _episode(request, pk, edit=True)
    try:
        agent = _agent_from_post(request.POST)
    except StudioError as exc:
        return _controls(request, episode, "_agent.html", problems=[str(exc)])
    services.episode_update(episode=episode, agent=agent)
    return _controls(request, episode, "_agent.html")


@require_POST
@login_required
def agent_control(request: HttpRequest, pk: int, command: str) -> HttpResponse:
    episode = _episode(request, pk, edit=True)
    try:
        if command == "run":
            steps = max(1, min(_int(request.POST.get("steps")) or 1, 500))
            metadata = {k: v for k, v in episode.metadata.items() if k != "agent_error"}
            services.episode_update(episode=episode, metadata=metadata)
            services.agent_run(episode=episode, steps=steps)
        elif command == "pause":
            services.agent_pause(episode=episode)
        elif command == "stop":
            services.agent_stop(episode=episode)
        else:
            return HttpResponseBadRequest("unknown command")
    except StudioError as exc:
        return _controls(request, episode, "_agent.html", problems=[str(exc)])
    return _controls(request, episode, "_agent.html")


# --- steps and the episode -------------------------------------------------------------------


def _step(request: HttpRequest, episode: Episode, index: int) -> Step:
    step = episode.steps.filter(index=index).first()
    if step is None:
        raise Http404("No such step")
    return step


@require_POST
@login_required
def step_retry(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    episode = _episode(request, pk, edit=True)
    step = _step(request, episode, index)
    try:
        services.step_retry(step=step)
    except StudioError as exc:
        messages.error(request, str(exc))
    return _after_post(request, episode)


@require_POST
@login_required
def step_cancel(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    episode = _episode(request, pk, edit=True)
    services.step_cancel(step=_step(request, episode, index))
    return _after_post(request, episode)


@require_POST
@login_required
def episode_fork(request: HttpRequest, pk: int) -> HttpResponse:
    episode = _episode(request, pk, edit=True)
    try:
        fork = services.episode_fork(
            episode=episode, at_step=_int(request.POST.get("at")) or 0, user=request.user
        )
    except StudioError as exc:
        messages.error(request, str(exc))
        return _after_post(request, episode)
    messages.success(request, f"Forked at step {fork.forked_at_step}.")
    url = reverse("episodes:detail", kwargs={"pk": fork.pk})
    if request.headers.get("HX-Request"):
        return HttpResponse(status=204, headers={"HX-Redirect": url})
    return redirect(url)


@require_POST
@login_required
def episode_close(request: HttpRequest, pk: int) -> HttpResponse:
    episode = _episode(request, pk, edit=True)
    services.episode_close(episode=episode)
    return _after_post(request, episode)


def _after_post(request: HttpRequest, episode: Episode) -> HttpResponse:
    if request.headers.get("HX-Request"):
        return HttpResponse(status=204)  # the WebSocket brings the change to every page
    return redirect("episodes:detail", pk=episode.pk)
