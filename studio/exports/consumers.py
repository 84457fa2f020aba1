from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.http import Http404

from studio.core.access import get_for_member
from studio.exports.models import ExportJob
from studio.exports.services import export_progress_html

UNAUTHORIZED = 4401
NOT_FOUND = 4404


class ExportProgressConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]
    """Live progress of one background export, as the job page's progress fragment."""

    async def connect(self) -> None:
        user = self.scope["user"]
        if not user.is_authenticated:
            await self.close(code=UNAUTHORIZED)
            return
        html = await self._current(user, int(self.scope["url_route"]["kwargs"]["job_id"]))
        if html is None:
            await self.close(code=NOT_FOUND)
            return
        self.group = f"export-{self.scope['url_route']['kwargs']['job_id']}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send(text_data=html)  # re-sync: the database is the source of truth

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def export_progress(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["html"])

    async def _current(self, user: Any, job_id: int) -> str | None:
        html: str | None = await database_sync_to_async(_progress_html)(user, job_id)
        return html


def _progress_html(user: Any, job_id: int) -> str | None:
    try:
        job = get_for_member(user, ExportJob.objects.select_related("collection"), pk=job_id)
    except Http404:
        return None
    return export_progress_html(job)
