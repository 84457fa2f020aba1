"""Finding steps whose task was lost, so an episode never stays busy forever.

A step's task can vanish: Redis restarted without persistence, a message dropped,
an embedded studio stopped while a step ran. Redelivery covers a worker that
dies; nothing covers a message that is gone. Every ``STEP_SWEEP_EVERY_S`` the
sweep sends the task again for a step still pending ``STEP_SWEEP_GRACE_S`` after
its last dispatch, and for one running past the task time limit (a living worker
is killed at that limit). Sending twice is safe: the task claims its step with a
conditional UPDATE, which takes over only an abandoned step.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections
from django.db.models import Q
from django.utils import timezone

from studio.episodes.models import Step, StepStatus

logger = logging.getLogger(__name__)
_started = threading.Event()


def lost_steps() -> list[int]:
    """Ids of the steps whose task looks lost (see the module docstring)."""
    now = timezone.now()
    waiting = now - timedelta(seconds=settings.STEP_SWEEP_GRACE_S)
    abandoned = now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    pending = Q(status=StepStatus.PENDING) & (
        Q(dispatched_at__lt=waiting) | Q(dispatched_at__isnull=True, created_at__lt=waiting)
    )
    running = Q(status=StepStatus.RUNNING, started_at__lt=abandoned)
    return list(Step.objects.filter(pending | running).values_list("pk", flat=True)[:500])


def sweep_steps() -> int:
    """Send the task again for every lost step; returns how many."""
    from studio.episodes.services import dispatch_step

    found = lost_steps()
    Step.objects.filter(pk__in=found).update(dispatched_at=timezone.now())
    for step_id in found:
        dispatch_step(step_id)
    if found:
        logger.warning("step sweep: sent %d lost step(s) again: %s", len(found), found)
    return len(found)


def start_sweeper() -> None:
    """Sweep in a daemon thread of this process, every ``STEP_SWEEP_EVERY_S`` (once per process)."""
    every = settings.STEP_SWEEP_EVERY_S
    if every <= 0 or _started.is_set():
        return
    _started.set()

    def loop() -> None:
        while True:
            try:
                sweep_steps()
            except Exception:  # a database hiccup must not end the sweeper
                logger.exception("step sweep failed; trying again later")
            finally:
                close_old_connections()
            threading.Event().wait(every)

    threading.Thread(target=loop, name="step-sweeper", daemon=True).start()
