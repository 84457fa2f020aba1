"""Observation documents for the episode page's sandboxed iframes.

Each response is ``simulator.render.render(domain, observation)`` under the CSP
of ``studio.lib.render_response`` (sandbox, default-src 'none'): nothing in a
model's observation can run, load, or reach the studio's origin. Members only.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET

from studio.core.access import get_for_member
from studio.episodes.models import Episode, Step, StepStatus
from studio.lib.render_response import observation_response


def _episode(request: HttpRequest, pk: int) -> Episode:
    episode: Episode = get_for_member(
        request.user, Episode.objects.select_related("world_revision"), pk=pk
    )
    return episode


@require_GET
@login_required
@xframe_options_sameorigin
def render_step(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    episode = _episode(request, pk)
    step: Step | None = episode.steps.filter(index=index).first()
    if step is None:
        raise Http404("No such step")
    observation = step.observation if step.status == StepStatus.DONE else step.partial_observation
    return observation_response(
        episode.domain, observation, title=f"{episode.title} · step {step.index}"
    )


@require_GET
@login_required
@xframe_options_sameorigin
def render_initial(request: HttpRequest, pk: int) -> HttpResponse:
    episode = _episode(request, pk)
    observation = str(episode.world_revision.spec.get("initial_observation", ""))
    return observation_response(episode.domain, observation, title=f"{episode.title} · start")
