"""One rollout task's work: take the next step of one job episode, then hand over.

A task does at most one step, so every task stays well inside Celery's time
limits (and those inside the Redis visibility timeout): a long episode is a
chain of short tasks, each dispatching the next. A task delivered again after
its worker died continues from the episode's last done step; a pending step is
run, a failed one retried (the same row, so never a duplicate step), a running one
whose runner died is declared failed and retried.

Redis redelivers a message a visibility timeout after it was *fetched*, but a lease
ends a time limit after it was last *renewed* (after the endpoint slot wait), so the
copy can come while the dead task's lease still runs. A task that finds the row held
therefore watches that lease: it comes back when the lease ends, and takes the row
if the same owner still holds it (that owner died); if the owner let it go, the
owner sent the next task and the watch ends. Every failed claim watches, so no
chain of tasks ends while a row is unfinished.
"""

from __future__ import annotations

import logging
import time
import uuid
from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any

from celery import Task
from django.conf import settings
from django.db.models import Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from studio.episodes.agents import next_action
from studio.episodes.models import Episode, EpisodeSource, EpisodeStatus, Step, StepStatus
from studio.episodes.rewards import Rules, scenario_rules, step_outcome
from studio.episodes.services import (
    episode_close,
    episode_create,
    step_retry,
    step_submit,
    step_wait,
)
from studio.episodes.tasks import run_step
from studio.lib.step_loop import run_on_step_loop
from studio.lib.tasks import dispatch, dispatch_later
from studio.rollouts.models import FINISHED_ROWS, JobStatus, RolloutEpisode, RolloutJob, RowStatus
from studio.rollouts.semaphore import shared_endpoint_slot
from studio.rollouts.services import job_maybe_finish, publish_progress, row_finish

logger = logging.getLogger(__name__)

RETRY_PAUSE_S = 1.0


def lease_seconds() -> float:
    """A task cannot outlive its hard time limit, so its lease need not either; the
    visibility timeout (after which Redis redelivers) is longer still."""
    return float(settings.CELERY_TASK_TIME_LIMIT)


#: How long after a watched lease's end the watch looks, so the lease has surely ended.
WATCH_MARGIN_S = 0.5


def rollout_advance(job_id: int, index: int, watching: str = "") -> None:
    """One step of row ``index``; ``watching``: the lease owner a watch was sent for."""
    job = (
        RolloutJob.objects.select_related("scenario", "world_revision__world", "endpoint")
        .filter(pk=job_id)
        .first()
    )
    row = RolloutEpisode.objects.filter(job_id=job_id, index=index).first()
    if job is None or row is None or row.status in FINISHED_ROWS:
        return
    if job.status == JobStatus.CANCELLED:
        row_finish(row=row, status=RowStatus.CANCELLED, outcome="cancelled")
        return
    if watching and row.lease_owner != watching:
        return  # the watched owner let the row go, and sent its next task
    owner = uuid.uuid4().hex
    if not _claim(row, owner):
        _watch(row)
        return
    if watching:
        logger.warning("rollout %s #%s: task %s died holding the row", job_id, index, watching)
    row.refresh_from_db()
    more = False
    try:
        more = _advance(job, row, owner)
    except Exception as exc:  # a bug, the database, a soft time limit: retried a few times
        logger.exception("rollout %s #%s failed", job_id, index)
        row.attempts += 1
        RolloutEpisode.objects.filter(pk=row.pk).update(attempts=row.attempts)
        if row.attempts >= job.max_attempts:
            row_finish(
                row=row,
                status=RowStatus.FAILED,
                outcome="error",
                error=f"{type(exc).__name__}: {exc}",
            )
        else:
            time.sleep(RETRY_PAUSE_S)
            more = True
    finally:
        still_ours = RolloutEpisode.objects.filter(pk=row.pk, lease_owner=owner).update(
            lease_owner="", lease_until=None, dispatched_at=timezone.now()
        )
    if not still_ours:
        return  # the lease ran out and another task claimed the row: that one goes on
    if more:
        dispatch(_task(), job_id, index)
    else:
        job_maybe_finish(job=job)
    publish_progress(job)


def _task() -> Task[Any, Any]:
    # A real cycle: the task module imports this one to run ``rollout_advance``.
    from studio.rollouts.tasks import rollout_episode

    return rollout_episode


def _claim(row: RolloutEpisode, owner: str) -> bool:
    now = timezone.now()
    claimed = (
        RolloutEpisode.objects.filter(pk=row.pk, status__in=(RowStatus.PENDING, RowStatus.RUNNING))
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(
            lease_owner=owner,
            lease_until=now + timedelta(seconds=lease_seconds()),
            status=RowStatus.RUNNING,
            started_at=Coalesce("started_at", Value(now)),
        )
    )
    return claimed == 1


def _watch(row: RolloutEpisode) -> None:
    """Come back when the lease that beat this task's claim ends (see the module's doc)."""
    held = (
        RolloutEpisode.objects.filter(pk=row.pk, status__in=(RowStatus.PENDING, RowStatus.RUNNING))
        .exclude(lease_owner="")
        .values_list("lease_owner", "lease_until")
        .first()
    )
    owner, until = held or ("", None)
    if until is None:
        return  # finished, or let go (its holder sent the next task)
    delay = (until - timezone.now()).total_seconds() + WATCH_MARGIN_S
    dispatch_later(delay, _task(), row.job_id, row.index, watching=owner)


def _renew(row: RolloutEpisode, owner: str) -> bool:
    """Extend the lease after a wait (an endpoint slot can take longer than the lease);
    False when another task claimed the row meanwhile, so this one must not step it."""
    until = timezone.now() + timedelta(seconds=lease_seconds())
    renewed = RolloutEpisode.objects.filter(pk=row.pk, lease_owner=owner).update(lease_until=until)
    return renewed == 1


def _rules(job: RolloutJob) -> Rules:
    return Rules(criteria=scenario_rules(job.scenario).criteria, max_steps=job.max_steps)


def _episode(job: RolloutJob, row: RolloutEpisode) -> Episode:
    if row.episode_id is not None:
        return Episode.objects.select_related("world_revision", "scenario").get(pk=row.episode_id)
    episode = episode_create(
        project=job.project,
        user=job.created_by,
        scenario=job.scenario,
        world_revision=job.world_revision,
        seed=job.seed_for(row.index),
        agent=job.policy,
        source=EpisodeSource.ROLLOUT,
        title=f"{job.title} #{row.index}"[:200],
        endpoint=job.endpoint,
    )
    Episode.objects.filter(pk=episode.pk).update(
        metadata={**episode.metadata, "rollout": {"job": job.pk, "index": row.index}}
    )
    # The lease makes this task the only writer of the row, so the episode is set once.
    RolloutEpisode.objects.filter(pk=row.pk, episode__isnull=True).update(episode=episode)
    row.refresh_from_db()
    assert row.episode_id is not None
    return Episode.objects.select_related("world_revision", "scenario").get(pk=row.episode_id)


def _advance(job: RolloutJob, row: RolloutEpisode, owner: str) -> bool:
    """Take (or finish) one step; True when the episode needs another task."""
    episode = _episode(job, row)
    rules = _rules(job)
    last = episode.steps.order_by("-index").first()
    if last is not None and last.status in (StepStatus.FAILED, StepStatus.CANCELLED):
        if last.attempts >= job.max_attempts:
            return _end(job, row, episode, RowStatus.FAILED, "step failed", last.error)
        last = step_retry(step=last)
    if last is None or last.status == StepStatus.DONE:
        if last is not None:
            outcome = step_outcome(last, rules)
            if outcome.terminated:
                return _end(job, row, episode, RowStatus.DONE, "terminated")
            if outcome.truncated:
                return _end(job, row, episode, RowStatus.DONE, "truncated")
        if episode.status != EpisodeStatus.ACTIVE:
            return _end(job, row, episode, RowStatus.DONE, f"episode {episode.status}")
        action = next_action(episode)
        if action is None:
            return _end(job, row, episode, RowStatus.DONE, "actions exhausted")
        with _slot(episode):
            if not _renew(row, owner):
                return True  # not ours any more; the release below sends nothing
            step = step_submit(episode=episode, action=action, user=job.created_by)
            step = _run_and_wait(step)
    else:
        with _slot(episode):
            if not _renew(row, owner):
                return True
            step = _run_and_wait(last)
    _count(row, episode)
    if step.status == StepStatus.DONE:
        outcome = step_outcome(step, rules)
        if outcome.terminated:
            return _end(job, row, episode, RowStatus.DONE, "terminated")
        if outcome.truncated:
            return _end(job, row, episode, RowStatus.DONE, "truncated")
    # Done and going on, failed (the next task retries it), or still running elsewhere.
    return True


def _slot(episode: Episode) -> AbstractContextManager[None]:
    key = f"endpoint-{episode.endpoint_id}" if episode.endpoint_id else "endpoint-default"
    limit = settings.ROLLOUT_ENDPOINT_CONCURRENCY
    return shared_endpoint_slot(key, limit=limit, lease_s=lease_seconds())


def _run_and_wait(step: Step) -> Step:
    """Run the step here (``run_step`` claims it; a copy dispatched elsewhere then does
    nothing), or wait for whoever claimed it first. A running step whose worker died is
    taken over by the claim itself (see ``studio.episodes.runner.claim_step``)."""
    if step.status in (StepStatus.PENDING, StepStatus.RUNNING):
        run_step(step.pk)
    timeout = max(1.0, lease_seconds() - 1)
    # On the step loop: one loop per process may listen on the channel layer.
    result: Step = run_on_step_loop(lambda: step_wait(step.pk, timeout))
    return result


def _count(row: RolloutEpisode, episode: Episode) -> None:
    done = list(episode.steps.filter(status=StepStatus.DONE).values("reward", "telemetry"))
    tokens = sum(int((s["telemetry"] or {}).get("completion_tokens", 0) or 0) for s in done)
    reward = sum(float(s["reward"] or 0.0) for s in done)
    RolloutEpisode.objects.filter(pk=row.pk).update(
        steps_done=len(done), tokens=tokens, reward=reward
    )


def _end(
    job: RolloutJob,
    row: RolloutEpisode,
    episode: Episode,
    status: str,
    outcome: str,
    error: str = "",
) -> bool:
    _count(row, episode)
    if episode.status == EpisodeStatus.ACTIVE:
        episode_close(episode=episode)
    row_finish(row=row, status=status, outcome=outcome, error=error)
    return False
