"""Steps whose task was lost, so an episode never stays busy forever (see studio/lib/sweep.py).

A step is lost when it is still pending ``SWEEP_GRACE_S`` after its task was
last sent, or running past the task time limit (a living worker is killed at
that limit). Sending its task again is safe: the task claims the step with a
conditional UPDATE, which takes over only an abandoned step.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from studio.episodes.models import Step, StepStatus
from studio.episodes.services import dispatch_step


def lost_steps() -> list[int]:
    """Ids of the steps whose task looks lost (see the module docstring)."""
    now = timezone.now()
    waiting = now - timedelta(seconds=settings.SWEEP_GRACE_S)
    abandoned = now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    pending = Q(status=StepStatus.PENDING) & (
        Q(dispatched_at__lt=waiting) | Q(dispatched_at__isnull=True, created_at__lt=waiting)
    )
    running = Q(status=StepStatus.RUNNING, started_at__lt=abandoned)
    return list(Step.objects.filter(pending | running).values_list("pk", flat=True)[:500])


def sweep_steps() -> int:
    """Send the task again for every lost step; returns how many."""
    found = lost_steps()
    Step.objects.filter(pk__in=found).update(dispatched_at=timezone.now())
    for step_id in found:
        dispatch_step(step_id)
    return len(found)
