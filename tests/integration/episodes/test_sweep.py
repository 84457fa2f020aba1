"""Which steps the sweep sends again: only those whose task looks lost."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from studio.episodes.models import Step
from studio.episodes.sweep import lost_steps, sweep_steps
from tests.integration.episodes import helpers

pytestmark = pytest.mark.django_db(transaction=True)


def _step(index: int, status: str, *, dispatched_ago: float, started_ago: float | None = None):
    project, user = helpers.project_with(f"u{index}")
    episode = helpers.episode(project, user, model=helpers.replay_endpoint(project, ["$ "]))
    now = timezone.now()
    return Step.objects.create(
        episode=episode,
        index=1,
        action="ls",
        status=status,
        dispatched_at=now - timedelta(seconds=dispatched_ago),
        started_at=None if started_ago is None else now - timedelta(seconds=started_ago),
    )


@override_settings(SWEEP_GRACE_S=60, CELERY_TASK_TIME_LIMIT=600)
def test_only_steps_whose_task_looks_lost_are_found():
    waiting = _step(1, "pending", dispatched_ago=5)  # its task is probably queued
    lost = _step(2, "pending", dispatched_ago=120)
    running = _step(3, "running", dispatched_ago=700, started_ago=30)  # a worker has it
    abandoned = _step(4, "running", dispatched_ago=900, started_ago=900)
    done = _step(5, "done", dispatched_ago=900, started_ago=900)

    assert sorted(lost_steps()) == sorted([lost.pk, abandoned.pk])
    assert {waiting.pk, running.pk, done.pk}.isdisjoint(lost_steps())


@override_settings(SWEEP_GRACE_S=60)
def test_a_swept_step_runs_once_and_is_not_sent_again_at_once():
    lost = _step(1, "pending", dispatched_ago=120)

    assert sweep_steps() == 1
    assert sweep_steps() == 0  # dispatched again just now: within the grace period
    step = helpers.wait_for_step(lost.pk)
    assert (step.status, step.attempts) == ("done", 1)
