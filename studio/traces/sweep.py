"""Simulations whose task was lost (see studio/lib/sweep.py).

A simulation is lost when it is still pending ``SWEEP_GRACE_S`` after its task
was last sent, or running past the task time limit. Its task
claims it with a conditional UPDATE (:func:`studio.traces.services.simulation_claim`),
so sending it again is safe.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from studio.lib.tasks import dispatch
from studio.traces.models import Simulation, SimulationStatus
from studio.traces.tasks import run_simulation


def lost_simulations() -> list[int]:
    now = timezone.now()
    waiting = now - timedelta(seconds=settings.SWEEP_GRACE_S)
    abandoned = now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    lost = Q(status=SimulationStatus.PENDING, dispatched_at__lt=waiting) | Q(
        status=SimulationStatus.RUNNING, started_at__lt=abandoned
    )
    return list(Simulation.objects.filter(lost).values_list("pk", flat=True)[:100])


def sweep_simulations() -> int:
    """Send the task again for every lost simulation; returns how many."""
    found = lost_simulations()
    Simulation.objects.filter(pk__in=found).update(dispatched_at=timezone.now())
    for simulation_id in found:
        dispatch(run_simulation, simulation_id)
    return len(found)
