from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from studio.core.access import get_for_member
from studio.lib.consumers import LiveConsumer
from studio.rollouts.models import RolloutJob
from studio.rollouts.selectors import progress_context


class RolloutProgressConsumer(LiveConsumer):
    """The job's progress fragment, rendered from the database on every change."""

    id_kwarg = "job_id"

    def join(self, user: Any, object_id: int | None) -> str:
        job = get_for_member(user, RolloutJob.objects.all(), pk=object_id)
        self.job_id = job.pk
        return job.group_name

    def state(self) -> str:
        job = RolloutJob.objects.select_related(
            "scenario", "world_revision__world", "endpoint"
        ).get(pk=self.job_id)
        return render_to_string("rollouts/_progress.html", progress_context(job))
