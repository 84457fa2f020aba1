"""Rollout episodes whose task was lost (see studio/lib/sweep.py).

A running job's row is lost when it is unfinished, no task holds its lease, and
its task was last sent ``SWEEP_GRACE_S`` ago: each task of a row sends the next
one, so a lost message would stop that episode for good. A task claims its row
through the lease, so sending it again is safe.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from studio.rollouts.models import FINISHED_ROWS, JobStatus, RolloutEpisode
from studio.rollouts.services import rollout_rows_redispatch


def lost_rows() -> dict[int, list[int]]:
    """{job id: [row index, ...]} of the rows whose task looks lost."""
    now = timezone.now()
    waiting = now - timedelta(seconds=settings.SWEEP_GRACE_S)
    rows = (
        RolloutEpisode.objects.filter(job__status=JobStatus.RUNNING, dispatched_at__lt=waiting)
        .exclude(status__in=FINISHED_ROWS)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .values_list("job_id", "index")[:500]
    )
    found: dict[int, list[int]] = defaultdict(list)
    for job_id, index in rows:
        found[job_id].append(index)
    return dict(found)


def sweep_rollouts() -> int:
    """Send the task again for every lost row; returns how many."""
    return rollout_rows_redispatch(rows=lost_rows())
