from __future__ import annotations

from typing import Any

from studio.core.access import get_for_member
from studio.exports.models import ExportJob
from studio.exports.services import export_progress_html
from studio.lib.consumers import LiveConsumer


class ExportProgressConsumer(LiveConsumer):
    """Live progress of one background export, as the job page's progress fragment."""

    id_kwarg = "job_id"

    def join(self, user: Any, object_id: int | None) -> str:
        job = get_for_member(user, ExportJob.objects.all(), pk=object_id)
        self.job_id = job.pk
        return job.group_name

    def state(self) -> str:
        return export_progress_html(
            ExportJob.objects.select_related("collection").get(pk=self.job_id)
        )
