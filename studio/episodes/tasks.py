"""Episode tasks: run one step, and let an automatic agent take the next one.

Both are late-acknowledged and safe to deliver twice: ``run_step`` claims its
step with a conditional UPDATE (a second delivery finds it no longer pending and
returns), ``agent_run`` takes a turn with a conditional UPDATE on the episode.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from simulator.errors import SimulatorError
from studio.episodes.models import Episode, RunStatus, Step, StepStatus
from studio.episodes.runner import run_claimed_step


def claim_step(step_id: int) -> bool:
    """pending -> running, in one conditional UPDATE; False when someone else has it.

    A step still ``running`` after the task time limit was claimed by a worker that
    died (a living one is killed at that limit): a redelivered task takes it over,
    so a SIGKILLed worker's step runs again instead of staying ``running`` forever.
    """
    stale = timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    abandoned = Q(status=StepStatus.RUNNING, started_at__lt=stale)
    claimed = Step.objects.filter(Q(status=StepStatus.PENDING) | abandoned, pk=step_id).update(
        status=StepStatus.RUNNING,
        started_at=timezone.now(),
        attempts=F("attempts") + 1,
        cancel_requested=False,
        partial_observation="",
        partial_reasoning="",
        partial_seq=0,
    )
    return claimed == 1


@shared_task(name="episodes.run_step", acks_late=True)
def run_step(step_id: int) -> None:
    """Run step ``step_id``: stream it to the episode's group and save it."""
    if not claim_step(step_id):
        return
    run_claimed_step(step_id)


@shared_task(name="episodes.agent_run", acks_late=True)
def agent_step(episode_id: int) -> None:
    """The automatic agent's next step, while the episode's run lasts."""
    from studio.episodes import services
    from studio.episodes.agents import next_action

    episode = Episode.objects.filter(pk=episode_id).first()
    if episode is None or episode.run_status != RunStatus.RUNNING:
        return
    if episode.steps.filter(status__in=services.BUSY).exists():
        return  # the running step dispatches this task again when it ends
    if not services.agent_claim_turn(episode=episode):
        services.episode_update(episode=episode, run_status=RunStatus.IDLE, run_remaining=0)
        return
    problem: Any = None
    try:
        action = next_action(episode)
        if action is None:
            services.episode_update(episode=episode, run_status=RunStatus.IDLE, run_remaining=0)
            return
        services.step_submit(episode=episode, action=action)
    except (SimulatorError, services.EpisodeBusy, services.EpisodeClosed) as exc:
        problem = exc
    if problem is not None:
        metadata = {**episode.metadata, "agent_error": f"{type(problem).__name__}: {problem}"}
        services.episode_update(episode=episode, run_status=RunStatus.PAUSED, metadata=metadata)
