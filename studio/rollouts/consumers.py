from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.template.loader import render_to_string

from studio.core.access import get_for_member
from studio.rollouts.models import RolloutJob
from studio.rollouts.selectors import job_progress, rollout_rows

UNAUTHORIZED = 4401
NOT_FOUND = 4404


class RolloutProgressConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]
    """Pushes the job's progress fragment (re-rendered from the database) on every change."""

    async def connect(self) -> None:
        user = self.scope["user"]
        if not user.is_authenticated:
            await self.close(code=UNAUTHORIZED)
            return
        job_id = int(self.scope["url_route"]["kwargs"]["job_id"])
        if not await self._allowed(user, job_id):
            await self.close(code=NOT_FOUND)
            return
        self.job_id = job_id
        self.group = f"rollout-{job_id}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send(text_data=await self._render())  # catch up on (re)connect

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def rollout_progress(self, event: dict[str, Any]) -> None:
        await self.send(text_data=await self._render())

    @database_sync_to_async  # type: ignore[untyped-decorator, unused-ignore]
    def _allowed(self, user: Any, job_id: int) -> bool:
        try:
            get_for_member(user, RolloutJob.objects.all(), pk=job_id)
        except (Http404, PermissionDenied):
            return False
        return True

    @database_sync_to_async  # type: ignore[untyped-decorator, unused-ignore]
    def _render(self) -> str:
        job = RolloutJob.objects.select_related("scenario").get(pk=self.job_id)
        context = {"job": job, "progress": job_progress(job), "rows": rollout_rows(job)}
        return render_to_string("rollouts/_progress.html", context)
