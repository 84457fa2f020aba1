from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from studio.core.access import projects_for
from studio.core.health import run_checks
from studio.core.models import SANDBOX_SLUG
from studio.core.preload import embedded_model_state
from studio.episodes.selectors import episodes_for_user

CHECK_LABELS = {
    "database": "Database",
    "channel_layer": "Channel layer",
    "tasks": "Task runner",
    "world_model": "World model",
}


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    projects = projects_for(request.user).annotate(
        world_count=Count("worlds", filter=Q(worlds__archived=False), distinct=True),
        scenario_count=Count("scenarios", filter=Q(scenarios__archived=False), distinct=True),
        episode_count=Count("episodes", distinct=True),
    )
    recent = episodes_for_user(request.user)[:8]
    sandbox = next((p for p in projects if p.slug == SANDBOX_SLUG), None)
    return render(
        request,
        "core/home.html",
        {"projects": projects, "episodes": recent, "sandbox": sandbox},
    )


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Machine-readable health; 503 when any part is down, so load balancers can act on it."""
    report = run_checks()
    return JsonResponse(report, status=200 if report["ok"] else 503)


@require_GET
@login_required
@never_cache
def status(request: HttpRequest) -> HttpResponse:
    report = run_checks()
    checks = [(label, report[key]) for key, label in CHECK_LABELS.items()]
    context = {
        "health": {"mode": report["mode"], "checks": checks},
        "model_state": embedded_model_state(),
    }
    return render(request, "core/status.html", context)


@require_GET
@login_required
@never_cache
def model_state(request: HttpRequest) -> HttpResponse:
    """The embedded model's load state, polled by the composer and the status page while it loads."""
    return render(request, "core/_model-state.html", {"model_state": embedded_model_state()})


@require_GET
@login_required
def doc(request: HttpRequest, name: str) -> HttpResponse:
    """A page of docs/ as text, so links in the UI (the demo model's note) work offline."""
    path = settings.BASE_DIR / "docs" / f"{name}.md"
    if not path.is_file():
        raise Http404(f"no docs/{name}.md")
    return render(request, "core/doc.html", {"name": name, "text": path.read_text()})
