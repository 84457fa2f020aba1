"""Reads on episodes: lists, the state a step runs from, what the composer offers."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet

from simulator.episode import EpisodeState, Turn
from simulator.perturbations import Perturbation
from simulator.types import Sampling
from studio.core.access import projects_for
from studio.core.endpoints import default_endpoint_spec, request_layout
from studio.core.models import Project
from studio.episodes.models import Episode, Step, StepStatus
from studio.episodes.services import BUSY, active_perturbations
from studio.lib import stream_buffer
from studio.lib.compiled import CompiledQuery


def episodes_for_user(
    user: Any,
    *,
    project: Project | None = None,
    domain: str = "",
    status: str = "",
) -> QuerySet[Episode]:
    episodes = Episode.objects.filter(project__in=projects_for(user))
    if project is not None:
        episodes = episodes.filter(project=project)
    if domain:
        episodes = episodes.filter(domain=domain)
    if status:
        episodes = episodes.filter(status=status)
    return episodes.select_related("project", "world_revision__world").annotate(
        step_count=Count("steps")
    )


def history(episode: Episode, *, before: int) -> tuple[Turn, ...]:
    """Done steps before index ``before``, as the agent saw them.

    Only the two columns a prompt uses: a step's reasoning and raw output (thousands of
    tokens each, for a reasoning model) would otherwise be read for every earlier turn
    on every step.
    """
    return tuple(
        Turn(action, observation) for action, observation in _turns.all(episode.pk, before)
    )


@CompiledQuery
def _turns(episode_id: int, before: int) -> QuerySet[Step, tuple[str, str]]:
    steps = Step.objects.filter(episode_id=episode_id, index__lt=before, status=StepStatus.DONE)
    return steps.order_by("index").values_list("action", "observation")


def episode_state(episode: Episode, *, before: int) -> EpisodeState:
    """The simulator state step ``before`` runs from, in its endpoint's prompt layout."""
    sampling = Sampling.from_dict(episode.sampling) if episode.sampling else None
    world = episode.world_revision.to_world()
    layout, template = request_layout(episode.endpoint, world.domain)
    return EpisodeState(
        world=world,
        task=episode.task,
        history=history(episode, before=before),
        perturbations=tuple(Perturbation.from_dict(p) for p in active_perturbations(episode)),
        seed=episode.seed,
        sampling=sampling,
        layout=layout,
        system_template=template,
    )


def backend_spec(episode: Episode) -> dict[str, Any]:
    """The world model the episode runs on: its endpoint, or the deployment's default."""
    if episode.endpoint is not None:
        return episode.endpoint.to_spec()
    return default_endpoint_spec()


def with_streamed_text(step: Step) -> Step:
    """``step``, a running one with the text streamed so far (not only what was flushed).

    For a page that (re)connects mid-step: it has joined the episode's group before
    calling this, so the deltas after the snapshot reach it, and it takes only those
    newer than ``step.partial_seq`` (see studio/lib/stream_buffer.py). Not saved.
    """
    if step.status != StepStatus.RUNNING:
        return step
    snapshot = stream_buffer.read(step.pk)
    if snapshot is not None and snapshot.seq > step.partial_seq:
        step.partial_seq = snapshot.seq
        step.partial_reasoning = snapshot.reasoning
        step.partial_observation = snapshot.observation
    return step


def last_observation(episode: Episode) -> str:
    """What the agent sees now: the last done step's observation, or the initial screen."""
    row = _last_done_observation.first(episode.pk)
    if row is not None:
        return row[0]
    return str(episode.world_revision.spec.get("initial_observation", ""))


@CompiledQuery
def _last_done_observation(episode_id: int) -> QuerySet[Step, tuple[str]]:
    done = Step.objects.filter(episode_id=episode_id, status=StepStatus.DONE)
    return done.order_by("-index").values_list("observation")[:1]


def busy_step(episode: Episode) -> Step | None:
    """The episode's pending or running step, if any (one at most)."""
    return _busy_step.first(episode.pk)


# Compiled: every watching socket reads these two on each step's final event.
@CompiledQuery
def _busy_step(episode_id: int) -> QuerySet[Step]:
    busy = Step.objects.filter(episode_id=episode_id, status__in=BUSY)
    return busy.order_by("-index")[:1]
