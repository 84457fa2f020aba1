"""World and scenario authoring pages. Every view checks project membership.

Writes answer an htmx request with the fragment the page includes, and a plain
form post with a redirect to the page, so the same views serve both.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from simulator.domains import is_gui
from simulator.errors import InvalidWorld
from simulator.perturbations import PERTURBATION_KINDS
from simulator.scenario import ScenarioError
from studio.core.access import get_for_member, get_project_for, membership_for
from studio.lib.render_response import observation_response
from studio.worlds import drafts, forms, selectors, services
from studio.worlds.models import Scenario, World, WorldRevision


def _htmx(request: HttpRequest) -> bool:
    return bool(request.headers.get("HX-Request"))


def _world(request: HttpRequest, pk: int, *, edit: bool = False) -> World:
    qs = World.objects.select_related("project", "head")
    return get_for_member(request.user, qs, edit=edit, pk=pk)


def _scenario(request: HttpRequest, pk: int, *, edit: bool = False) -> Scenario:
    qs = Scenario.objects.select_related("project", "world", "world_revision", "endpoint")
    return get_for_member(request.user, qs, edit=edit, pk=pk)


def _can_edit(request: HttpRequest, obj: World | Scenario) -> bool:
    membership = membership_for(request.user, obj.project)
    return membership is not None and membership.can_edit


# --- worlds ---------------------------------------------------------------------------


@require_GET
@login_required
def world_list(request: HttpRequest) -> HttpResponse:
    archived = request.GET.get("archived") == "1"
    project = request.GET.get("project", "")
    worlds = selectors.world_list(user=request.user, project=project, archived=archived)
    return render(
        request,
        "worlds/world_list.html",
        {"worlds": worlds, "archived": archived, "project": project},
    )


@require_http_methods(["GET", "POST"])
@login_required
def world_create(request: HttpRequest) -> HttpResponseBase:
    source = request.POST if request.method == "POST" else request.GET
    slug = source.get("project", "")
    if slug:
        get_project_for(request.user, slug, edit=True)
    projects = selectors.editable_projects(user=request.user)
    errors: dict[str, str] = {}
    if request.method == "POST":
        domain = source.get("domain", "")
        title = source.get("title", "").strip()
        if not slug:
            errors["project"] = "Choose a project."
        if domain not in dict(drafts.domain_choices()):
            errors["domain"] = "Choose a domain."
        if not title:
            errors["title"] = "Give the world a title."
        if not errors:
            project, _ = get_project_for(request.user, slug, edit=True)
            world = services.world_create(
                project=project, spec=drafts.starter_spec(domain, title), user=request.user
            )
            return redirect("worlds:detail", pk=world.pk)
    context = {
        "projects": projects,
        "domains": drafts.domain_choices(),
        "selected_project": slug or (projects[0].slug if len(projects) == 1 else ""),
        "selected_domain": source.get("domain", ""),
        "title": source.get("title", ""),
        "errors": errors,
    }
    return render(request, "worlds/world_create.html", context, status=400 if errors else 200)


def _editor_context(
    request: HttpRequest, world: World, draft: drafts.Draft | None = None, **extra: Any
) -> dict[str, Any]:
    head = world.head
    if draft is None:
        draft = drafts.draft_from_spec(
            head.spec if head else drafts.starter_spec(world.domain, world.title)
        )
    return {
        "world": world,
        "head": head,
        "draft": draft,
        "can_edit": _can_edit(request, world),
        "gui": is_gui(world.domain),
        "revision_count": world.revisions.count(),
        "scenarios": world.scenarios.filter(archived=False),
        **extra,
    }


@require_GET
@login_required
@vary_on_headers("HX-Request")
def world_detail(request: HttpRequest, pk: int) -> HttpResponse:
    world = _world(request, pk)
    context = _editor_context(request, world)
    template = "worlds/_world-editor.html" if _htmx(request) else "worlds/world_detail.html"
    return render(request, template, context)


@require_POST
@login_required
def world_save(request: HttpRequest, pk: int) -> HttpResponseBase:
    world = _world(request, pk, edit=True)
    base = world.head.spec if world.head else None
    draft = drafts.draft_from_post(world.domain, request.POST, base=base)
    notice = ""
    if draft.ok and draft.spec is not None:
        note = request.POST.get("note", "").strip()[:200]
        revision, created = services.world_save(
            world=world, spec=draft.spec, user=request.user, note=note
        )
        world.refresh_from_db()
        notice = f"Saved revision {revision.number}." if created else "No changes: nothing saved."
        if not _htmx(request):
            messages.success(request, notice)
            return redirect("worlds:detail", pk=world.pk)
        draft = drafts.draft_from_spec(revision.spec)
    elif not _htmx(request):
        context = _editor_context(request, world, draft)
        return render(request, "worlds/world_detail.html", context, status=400)
    return render(
        request, "worlds/_world-editor.html", _editor_context(request, world, draft, notice=notice)
    )


@require_POST
@login_required
def world_validate(request: HttpRequest, pk: int) -> HttpResponse:
    """Re-render one field with the problems the whole draft has at that field."""
    world = _world(request, pk, edit=True)
    draft = drafts.draft_from_post(
        world.domain, request.POST, base=world.head.spec if world.head else None
    )
    name = request.POST.get("field", "")
    for f, value, errors in draft.fields:
        if f.name == name:
            context = {
                "f": f,
                "value": value,
                "errors": errors,
                "world": world,
                "can_edit": True,
                "validated": True,
            }
            return render(request, "worlds/_field.html", context)
    raise Http404("No such field")


@require_POST
@login_required
def world_preview(request: HttpRequest, pk: int) -> HttpResponse:
    """The draft's initial observation rendered, for the editor's live preview iframe."""
    world = _world(request, pk, edit=True)
    return observation_response(world.domain, request.POST.get("initial_observation", ""))


@require_GET
@login_required
def revision_preview(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    world = _world(request, pk)
    revision = get_object_or_404(WorldRevision, world=world, number=number)
    return observation_response(world.domain, revision.spec.get("initial_observation", ""))


@require_GET
@login_required
@vary_on_headers("HX-Request")
def world_revisions(request: HttpRequest, pk: int) -> HttpResponse:
    world = _world(request, pk)
    revisions = list(world.revisions.all())
    diff: list[tuple[str, str]] = []
    old = new = None
    if len(revisions) >= 2:
        numbers = {r.number: r for r in revisions}
        try:
            a = int(request.GET.get("a", revisions[1].number))
            b = int(request.GET.get("b", revisions[0].number))
        except ValueError:
            raise Http404("No such revision") from None
        old, new = numbers.get(a), numbers.get(b)
        if old is None or new is None:
            raise Http404("No such revision")
        diff = selectors.revision_diff(old=old, new=new)
    context = {"world": world, "revisions": revisions, "diff": diff, "old": old, "new": new}
    template = "worlds/_revision-diff.html" if _htmx(request) else "worlds/world_revisions.html"
    return render(request, template, context)


@require_POST
@login_required
def world_duplicate(request: HttpRequest, pk: int) -> HttpResponseBase:
    world = _world(request, pk, edit=True)
    copy = services.world_duplicate(world=world, user=request.user)
    messages.success(request, f"Duplicated as “{copy.title}”.")
    return redirect("worlds:detail", pk=copy.pk)


@require_POST
@login_required
def world_archive(request: HttpRequest, pk: int) -> HttpResponseBase:
    world = _world(request, pk, edit=True)
    archived = request.POST.get("archived", "1") == "1"
    services.world_set_archived(world=world, archived=archived)
    messages.success(request, f"{'Archived' if archived else 'Restored'} “{world.title}”.")
    return redirect("worlds:detail", pk=world.pk)


# --- scenarios ------------------------------------------------------------------------


@require_GET
@login_required
def scenario_list(request: HttpRequest) -> HttpResponse:
    archived = request.GET.get("archived") == "1"
    project = request.GET.get("project", "")
    context = {
        "scenarios": selectors.scenario_list(user=request.user, project=project, archived=archived),
        "worlds": selectors.editable_worlds(user=request.user),
        "projects": selectors.editable_projects(user=request.user),
        "archived": archived,
        "project": project,
    }
    return render(request, "worlds/scenario_list.html", context)


@require_http_methods(["GET", "POST"])
@login_required
def scenario_create(request: HttpRequest) -> HttpResponseBase:
    source = request.POST if request.method == "POST" else request.GET
    world = None
    if source.get("world"):
        try:
            world = _world(request, int(source["world"]), edit=True)
        except ValueError:
            raise Http404("No such world") from None
    title = source.get("title", "").strip()
    error = ""
    if request.method == "POST":
        if world is None or world.head is None:
            error = "Choose a world."
        elif not title:
            error = "Give the scenario a title."
        else:
            scenario = services.scenario_create(world=world, title=title, user=request.user)
            return redirect("worlds:scenario-detail", pk=scenario.pk)
    context = {
        "world": world,
        "worlds": selectors.editable_worlds(user=request.user),
        "title": title,
        "error": error,
    }
    return render(request, "worlds/scenario_create.html", context, status=400 if error else 200)


def _scenario_context(request: HttpRequest, scenario: Scenario, **extra: Any) -> dict[str, Any]:
    spec = scenario.spec
    rows = [forms.perturbation_row(i, p) for i, p in enumerate(spec.get("perturbations", []))]
    policy = spec.get("policy", {})
    context: dict[str, Any] = {
        "scenario": scenario,
        "world": scenario.world,
        "can_edit": _can_edit(request, scenario),
        "revisions": scenario.world.revisions.all(),
        "rows": rows,
        "kinds": list(PERTURBATION_KINDS.values()),
        "criteria": forms.criterion_rows(spec.get("success", [])),
        "policy": {
            "kind": policy.get("kind", "human"),
            "actions": "\n".join(policy.get("actions", [])),
            "endpoint": policy.get("endpoint", ""),
        },
        "sampling_override": spec.get("sampling") is not None,
        "sampling": forms.sampling_values(spec.get("sampling")),
        "endpoints": selectors.endpoints_for(project=scenario.project),
        "errors": {},
        "newer_revision": scenario.world.head_id != scenario.world_revision_id,
    }
    context.update(extra)
    return context


@require_GET
@login_required
@vary_on_headers("HX-Request")
def scenario_detail(request: HttpRequest, pk: int) -> HttpResponse:
    scenario = _scenario(request, pk)
    return render(request, "worlds/scenario_detail.html", _scenario_context(request, scenario))


SECTIONS = {
    "basics": "worlds/_scenario-basics.html",
    "success": "worlds/_success.html",
    "policy": "worlds/_policy.html",
}


def _section_response(
    request: HttpRequest, scenario: Scenario, section: str, **extra: Any
) -> HttpResponseBase:
    if not _htmx(request):
        if extra.get("errors"):
            context = _scenario_context(request, scenario, **extra)
            return render(request, "worlds/scenario_detail.html", context, status=400)
        return redirect("worlds:scenario-detail", pk=scenario.pk)
    return render(request, SECTIONS[section], _scenario_context(request, scenario, **extra))


@require_POST
@login_required
def scenario_save(request: HttpRequest, pk: int) -> HttpResponseBase:
    scenario = _scenario(request, pk, edit=True)
    section = request.POST.get("section", "")
    if section not in SECTIONS:
        raise Http404("No such section")
    errors: dict[str, list[str]] = {}
    changes: dict[str, Any] = {}
    revision = None
    endpoint: Any = False
    posted: dict[str, Any] = {}
    if section == "basics":
        parsed = forms.Parsed({})
        changes = {
            "title": request.POST.get("title", "").strip(),
            "task": request.POST.get("task", ""),
        }
        for name in ("max_steps", "seed"):
            value = forms.number(parsed, name, request.POST.get(name, "") or "0", int)
            changes[name] = value
        errors.update(parsed.errors)
        try:
            number = int(request.POST.get("world_revision", ""))
            revision = scenario.world.revisions.get(number=number)
        except (ValueError, WorldRevision.DoesNotExist):
            errors.setdefault("world_revision", []).append("choose a revision of this world")
    elif section == "success":
        rows, parsed_rows = forms.criteria_from_post(request.POST)
        if request.POST.get("op") == "add":
            rows.append(
                {
                    "kind": "regex",
                    "pattern": "",
                    "path": "",
                    "value": "",
                    "description": "",
                    "reward": "1.0",
                    "terminate": "on",
                }
            )
            return render(
                request, SECTIONS[section], _scenario_context(request, scenario, criteria=rows)
            )
        for row, p in zip(rows, parsed_rows, strict=True):
            row["errors"] = [f"{key}: {e}" for key, found in p.errors.items() for e in found]  # type: ignore[assignment]
            if p.errors:
                errors[forms.NON_FIELD] = ["Fix the problems marked below; nothing was saved."]
        changes = {"success": [p.data for p in parsed_rows]}
        posted = {"criteria": rows}
    else:
        policy = forms.policy_from_post(request.POST)
        sampling = forms.sampling_from_post(request.POST)
        errors.update(policy.errors)
        errors.update(sampling.errors)
        changes = {"policy": policy.data, **sampling.data}
        chosen = request.POST.get("endpoint", "")
        endpoint = None
        if chosen:
            endpoint = (
                selectors.endpoints_for(project=scenario.project).filter(pk=chosen).first()
                if chosen.isdigit()
                else None
            )
            if endpoint is None:
                errors.setdefault("endpoint", []).append("choose one of the listed endpoints")
        posted = {
            "policy": {
                "kind": policy.data["kind"],
                "actions": request.POST.get("policy-actions", ""),
                "endpoint": policy.data["endpoint"],
            },
            "sampling_override": bool(request.POST.get("sampling-override")),
            "sampling": {n: request.POST.get(f"sampling-{n}", "") for n in forms.SAMPLING_FIELDS},
        }
    if not errors:
        try:
            services.scenario_update(
                scenario=scenario, changes=changes, world_revision=revision, endpoint=endpoint
            )
        except ScenarioError as exc:
            errors[forms.NON_FIELD] = exc.problems
            scenario.refresh_from_db()
    if errors:
        return _section_response(request, scenario, section, errors=errors, **posted)
    return _section_response(request, scenario, section, notice="Saved.")


@require_POST
@login_required
def scenario_validate(request: HttpRequest, pk: int) -> HttpResponse:
    """Re-render one success-criterion row with its problems, without saving."""
    scenario = _scenario(request, pk, edit=True)
    try:
        index = int(request.POST.get("row", ""))
    except ValueError:
        raise Http404("No such row") from None
    row = {n: request.POST.get(f"success-{index}-{n}", "") for n in forms.CRITERION_FIELDS}
    parsed = forms.criterion_from_row(row)
    shown: dict[str, Any] = {
        **row,
        "errors": [f"{k}: {e}" for k, found in parsed.errors.items() for e in found],
    }
    context = {"scenario": scenario, "i": index, "c": shown, "can_edit": True, "validated": True}
    return render(request, "worlds/_criterion.html", context)


def _perturbations_response(
    request: HttpRequest, scenario: Scenario, **extra: Any
) -> HttpResponseBase:
    if not _htmx(request):
        return redirect("worlds:scenario-detail", pk=scenario.pk)
    return render(
        request, "worlds/_perturbations.html", _scenario_context(request, scenario, **extra)
    )


def _index(scenario: Scenario, index: int) -> int:
    if not 0 <= index < len(scenario.spec.get("perturbations", [])):
        raise Http404("No such perturbation")
    return index


@require_POST
@login_required
def perturbation_add(request: HttpRequest, pk: int) -> HttpResponseBase:
    scenario = _scenario(request, pk, edit=True)
    kind = request.POST.get("kind", "")
    if kind not in PERTURBATION_KINDS:
        return _perturbations_response(request, scenario, add_error=f"Unknown kind {kind!r}.")
    services.scenario_perturbation_add(scenario=scenario, kind=kind)
    return _perturbations_response(request, scenario)


@require_POST
@login_required
def perturbation_save(request: HttpRequest, pk: int, index: int) -> HttpResponseBase:
    scenario = _scenario(request, pk, edit=True)
    index = _index(scenario, index)
    current = scenario.spec["perturbations"][index]
    parsed = forms.perturbation_from_post(current["kind"], request.POST)
    if parsed.ok:
        try:
            services.scenario_perturbation_update(scenario=scenario, index=index, data=parsed.data)
        except ScenarioError as exc:
            parsed.errors[forms.NON_FIELD] = exc.problems
    if not _htmx(request):
        return redirect("worlds:scenario-detail", pk=scenario.pk)
    if parsed.ok:
        row = forms.perturbation_row(index, scenario.spec["perturbations"][index], saved=True)
    else:
        row = forms.perturbation_row(index, current, errors=parsed.errors, posted=request.POST)
    count = len(scenario.spec["perturbations"])
    return render(
        request,
        "worlds/_perturbation.html",
        {"scenario": scenario, "row": row, "can_edit": True, "count": count},
    )


@require_POST
@login_required
def perturbation_remove(request: HttpRequest, pk: int, index: int) -> HttpResponseBase:
    scenario = _scenario(request, pk, edit=True)
    services.scenario_perturbation_remove(scenario=scenario, index=_index(scenario, index))
    return _perturbations_response(request, scenario)


@require_POST
@login_required
def perturbation_move(request: HttpRequest, pk: int, index: int) -> HttpResponseBase:
    scenario = _scenario(request, pk, edit=True)
    offset = -1 if request.POST.get("direction") == "up" else 1
    services.scenario_perturbation_move(
        scenario=scenario, index=_index(scenario, index), offset=offset
    )
    return _perturbations_response(request, scenario)


@require_GET
@login_required
@vary_on_headers("HX-Request")
def scenario_prompt(request: HttpRequest, pk: int) -> HttpResponse:
    scenario = _scenario(request, pk)
    try:
        preview = selectors.scenario_prompt_preview(scenario=scenario)
        error = ""
    except (InvalidWorld, ScenarioError) as exc:
        preview, error = None, str(exc)
    context = {"scenario": scenario, "preview": preview, "error": error}
    template = "worlds/_prompt-preview.html" if _htmx(request) else "worlds/scenario_prompt.html"
    return render(request, template, context)


@require_GET
@login_required
def scenario_export(request: HttpRequest, pk: int) -> HttpResponse:
    scenario = _scenario(request, pk)
    response = HttpResponse(
        services.bundle_export(scenario=scenario), content_type="application/json; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="scenario-{scenario.pk}.bundle.json"'
    return response


@require_http_methods(["GET", "POST"])
@login_required
def scenario_import(request: HttpRequest) -> HttpResponseBase:
    problems: list[str] = []
    slug = (request.POST if request.method == "POST" else request.GET).get("project", "")
    if slug:
        get_project_for(request.user, slug, edit=True)
    if request.method == "POST":
        upload = request.FILES.get("bundle")
        if not slug:
            problems.append("project: choose a project")
        if upload is None:
            problems.append("bundle: choose a bundle file")
        elif upload.size and upload.size > 20 * 1024 * 1024:
            problems.append("bundle: larger than 20 MB")
        if not problems and upload is not None:
            project, _ = get_project_for(request.user, slug, edit=True)
            try:
                text = upload.read().decode("utf-8")
                scenario, _ = services.bundle_import(project=project, text=text, user=request.user)
            except UnicodeDecodeError:
                problems.append("bundle: not UTF-8 text")
            except services.BundleRejected as exc:
                problems.extend(exc.problems)
            else:
                messages.success(request, f"Imported “{scenario.title}”.")
                return redirect("worlds:scenario-detail", pk=scenario.pk)
    context = {
        "projects": selectors.editable_projects(user=request.user),
        "problems": problems,
        "selected_project": slug,
    }
    return render(request, "worlds/scenario_import.html", context, status=400 if problems else 200)


@require_POST
@login_required
def scenario_duplicate(request: HttpRequest, pk: int) -> HttpResponseBase:
    scenario = _scenario(request, pk, edit=True)
    copy = services.scenario_duplicate(scenario=scenario, user=request.user)
    messages.success(request, f"Duplicated as “{copy.title}”.")
    return redirect("worlds:scenario-detail", pk=copy.pk)


@require_POST
@login_required
def scenario_archive(request: HttpRequest, pk: int) -> HttpResponseBase:
    scenario = _scenario(request, pk, edit=True)
    archived = request.POST.get("archived", "1") == "1"
    services.scenario_set_archived(scenario=scenario, archived=archived)
    messages.success(request, f"{'Archived' if archived else 'Restored'} “{scenario.title}”.")
    return redirect("worlds:scenario-detail", pk=scenario.pk)
