"""Writes on rollout jobs: create, cancel, resume, and finishing rows and jobs.

A job that ends (every episode finished, or cancelled) gathers its episodes into
the project's collection named ``job.collection_name`` (``rollout-<id>`` unless
the form named one), where they are browsed and exported like any collection.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from studio.core.models import ModelEndpoint, Project
from studio.episodes.services import episode_close, validate_agent
from studio.errors import RejectedInput
from studio.exports.models import ItemKind
from studio.exports.services import collection_add_items, collection_get_or_create
from studio.lib.channels import PROGRESS, send_to_group
from studio.lib.tasks import dispatch
from studio.rollouts.models import (
    FINISHED_ROWS,
    JobStatus,
    RolloutEpisode,
    RolloutJob,
    RowStatus,
)
from studio.rollouts.selectors import rollout_job_episodes
from studio.worlds.models import Scenario, WorldRevision

POLICY_KINDS = ("scripted", "llm")
MAX_EPISODES = 10_000
#: A collection's name is at most this long (``exports.Collection.name``).
COLLECTION_NAME_MAX = 120


def validate_policy(policy: dict[str, Any]) -> dict[str, Any]:
    """A rollout's agent: scripted (a list of actions) or llm (an endpoint name, or the default)."""
    kind = policy.get("kind")
    if kind not in POLICY_KINDS:
        raise RejectedInput(f"the policy must be scripted or llm, not {kind!r}")
    return validate_agent(policy)


def rollout_job_create(
    *,
    project: Project,
    scenario: Scenario | None = None,
    world_revision: WorldRevision | None = None,
    user: User | None,
    episodes: int,
    max_steps: int,
    policy: dict[str, Any],
    base_seed: int = 0,
    seeds: list[int] | None = None,
    endpoint: ModelEndpoint | None = None,
    title: str = "",
    collection_name: str = "",
    max_attempts: int = 3,
) -> RolloutJob:
    """A job with one row per episode, and one ``rollout_episode`` task per row (on commit).

    Its episodes start from ``scenario``, or from a bare ``world_revision``: one of the two."""
    if (scenario is None) == (world_revision is None):
        raise RejectedInput("a rollout starts from one scenario or one world")
    if scenario is not None and scenario.project_id != project.pk:
        raise RejectedInput("the scenario belongs to another project")
    if world_revision is not None and world_revision.world.project_id != project.pk:
        raise RejectedInput("the world belongs to another project")
    if endpoint is not None and endpoint.project_id not in (None, project.pk):
        raise RejectedInput("the world model endpoint belongs to another project")
    if not 1 <= episodes <= MAX_EPISODES:
        raise RejectedInput(f"episodes must be between 1 and {MAX_EPISODES}")
    if max_steps < 1:
        raise RejectedInput("max_steps must be at least 1")
    policy = validate_policy(policy)
    with transaction.atomic():
        job = RolloutJob(
            project=project,
            scenario=scenario,
            world_revision=world_revision,
            title=title[:200],
            episodes=episodes,
            max_steps=max_steps,
            base_seed=base_seed,
            seeds=list(seeds or []),
            policy=policy,
            endpoint=endpoint,
            max_attempts=max_attempts,
            created_by=user,
        )
        job.title = job.title or f"{job.source_title} × {episodes}"[:200]
        job.save()
        job.collection_name = (collection_name.strip() or f"rollout-{job.pk}")[:COLLECTION_NAME_MAX]
        job.save(update_fields=["collection_name"])
        RolloutEpisode.objects.bulk_create(
            RolloutEpisode(job=job, index=i) for i in range(episodes)
        )
        _dispatch_rows(job, range(episodes))
    return job


def _dispatch_rows(job: RolloutJob, indexes: Any) -> None:
    # A real cycle: the task runs the runner, which finishes rows and jobs through here.
    from studio.rollouts.tasks import rollout_episode

    indexes = list(indexes)
    job.rows.filter(index__in=indexes).update(dispatched_at=timezone.now())
    for index in indexes:
        dispatch(rollout_episode, job.pk, index)


def rollout_rows_redispatch(*, rows: dict[int, list[int]]) -> int:
    """Send again the tasks of rows whose task was lost ({job id: [row index, ...]})."""
    for job in RolloutJob.objects.filter(pk__in=rows, status=JobStatus.RUNNING):
        with transaction.atomic():
            _dispatch_rows(job, rows[job.pk])
    return sum(len(indexes) for indexes in rows.values())


def rollout_job_resume(*, job: RolloutJob) -> int:
    """Dispatch a task for every unfinished row (after a restart); safe to call any time:
    a row another task holds is left to it (and taken once its lease ends, if that
    task died: studio.rollouts.runner). Returns how many were dispatched."""
    if job.status == JobStatus.CANCELLED:
        return 0
    indexes = list(job.rows.exclude(status__in=FINISHED_ROWS).values_list("index", flat=True))
    with transaction.atomic():
        _dispatch_rows(job, indexes)
    return len(indexes)


def rollout_job_cancel(*, job: RolloutJob) -> None:
    """Stop the job: no new steps; running steps are cancelled and their episodes closed."""
    updated = RolloutJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(
        status=JobStatus.CANCELLED, finished_at=timezone.now()
    )
    open_rows = list(job.rows.exclude(status__in=FINISHED_ROWS).select_related("episode"))
    job.rows.exclude(status__in=FINISHED_ROWS).update(
        status=RowStatus.CANCELLED, outcome="cancelled", finished_at=timezone.now()
    )
    for row in open_rows:
        if row.episode is not None:
            episode_close(episode=row.episode)
    job.refresh_from_db()
    if updated:
        _collect(job)
    publish_progress(job)


def row_finish(*, row: RolloutEpisode, status: str, outcome: str, error: str = "") -> bool:
    """Mark a running row finished (once: a conditional UPDATE); True when this call did it."""
    changed = RolloutEpisode.objects.filter(
        pk=row.pk, status__in=(RowStatus.PENDING, RowStatus.RUNNING)
    ).update(status=status, outcome=outcome[:200], error=error[:4000], finished_at=timezone.now())
    return changed == 1


def job_maybe_finish(*, job: RolloutJob) -> bool:
    """Mark the job done once every row has finished (and collect its episodes, once)."""
    if job.rows.exclude(status__in=FINISHED_ROWS).exists():
        return False
    changed = RolloutJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(
        status=JobStatus.DONE, finished_at=timezone.now()
    )
    if changed:
        job.refresh_from_db()
        _collect(job)
    return changed == 1


def _collect(job: RolloutJob) -> None:
    """Add the job's episodes to its collection (made on first use; none when it ran none)."""
    episodes = list(rollout_job_episodes(job).values_list("pk", flat=True))
    if not episodes:
        return
    collection = collection_get_or_create(
        project=job.project, name=job.collection_name, user=job.created_by
    )
    collection_add_items(collection=collection, items=[(ItemKind.EPISODE, pk) for pk in episodes])


def publish_progress(job: RolloutJob) -> None:
    send_to_group(job.group_name, {"type": PROGRESS})
