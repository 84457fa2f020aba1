"""Reads on rollout jobs: lists, progress figures, the episodes to collect."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, QuerySet, Sum
from django.utils import timezone

from studio.core.access import projects_for
from studio.episodes.models import Episode
from studio.rollouts.models import RolloutEpisode, RolloutJob, RowStatus


def rollout_jobs_for(user: User | AnonymousUser) -> QuerySet[RolloutJob]:
    return RolloutJob.objects.filter(project__in=projects_for(user)).select_related(
        "project", "scenario", "world_revision__world"
    )


def rollout_job_episodes(job: RolloutJob) -> QuerySet[Episode]:
    """The job's episodes, in row order: what an export of ``job.collection_name`` holds."""
    return Episode.objects.filter(rollout_row__job=job).order_by("rollout_row__index")


def rollout_rows(job: RolloutJob) -> QuerySet[RolloutEpisode]:
    return job.rows.select_related("episode").order_by("index")


def progress_context(job: RolloutJob) -> dict[str, object]:
    """What ``rollouts/_progress.html`` shows: the page's view and its consumer both render it."""
    return {"job": job, "progress": job_progress(job), "rows": rollout_rows(job)}


@dataclass(frozen=True)
class Progress:
    total: int
    pending: int
    running: int
    done: int
    failed: int
    cancelled: int
    steps: int
    tokens: int
    elapsed_s: float
    steps_per_s: float
    tokens_per_s: float
    #: Finished episodes per minute since the job started: the throughput a short-episode
    #: job is judged by, where steps/s mostly measures the world model.
    episodes_per_min: float
    eta_s: float | None

    @property
    def finished(self) -> int:
        return self.done + self.failed + self.cancelled

    @property
    def percent(self) -> int:
        return round(100 * self.finished / self.total) if self.total else 100


def job_progress(job: RolloutJob) -> Progress:
    counts = dict(job.rows.values_list("status").annotate(n=Count("pk")).order_by())
    sums = job.rows.aggregate(steps=Sum("steps_done"), tokens=Sum("tokens"))
    steps, tokens = int(sums["steps"] or 0), int(sums["tokens"] or 0)
    end = job.finished_at or timezone.now()
    elapsed = max((end - job.created_at).total_seconds(), 1e-3)
    total = job.episodes
    finished = sum(
        counts.get(s, 0) for s in (RowStatus.DONE, RowStatus.FAILED, RowStatus.CANCELLED)
    )
    eta: float | None = None
    if job.finished_at is None and 0 < finished < total:
        eta = elapsed * (total - finished) / finished
    elif job.finished_at is None and steps and finished == 0:
        expected = total * job.max_steps
        eta = max(expected - steps, 0) / (steps / elapsed)
    elif job.finished_at is not None or finished == total:
        eta = 0.0
    return Progress(
        total=total,
        pending=counts.get(RowStatus.PENDING, 0),
        running=counts.get(RowStatus.RUNNING, 0),
        done=counts.get(RowStatus.DONE, 0),
        failed=counts.get(RowStatus.FAILED, 0),
        cancelled=counts.get(RowStatus.CANCELLED, 0),
        steps=steps,
        tokens=tokens,
        elapsed_s=elapsed,
        steps_per_s=steps / elapsed,
        tokens_per_s=tokens / elapsed,
        episodes_per_min=60 * finished / elapsed,
        eta_s=eta,
    )
