"""The rollout task: one step of one job episode (see ``studio.rollouts.runner``)."""

from __future__ import annotations

from celery import shared_task

from studio.rollouts.runner import rollout_advance


@shared_task(name="rollouts.rollout_episode", acks_late=True)
def rollout_episode(job_id: int, index: int, watching: str = "") -> None:
    """Advance episode ``index`` of job ``job_id`` by one step; safe to deliver twice.
    ``watching``: sent by a task that found the row held, for when that lease ends."""
    rollout_advance(job_id, index, watching)
