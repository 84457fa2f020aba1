from __future__ import annotations

import time
import uuid
from typing import Any

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.template.loader import render_to_string

from studio.core.tasks import pipeline_ping
from studio.lib.tasks import dispatch

UNAUTHORIZED = 4401


class StatusConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """The status page's pipeline check: browser → task runner → channel layer → browser."""

    async def connect(self) -> None:
        if not self.scope["user"].is_authenticated:
            await self.close(code=UNAUTHORIZED)
            return
        self.group = f"status-{uuid.uuid4().hex}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and "ping" in content:
            await sync_to_async(dispatch)(pipeline_ping, self.group, time.time())

    async def pipeline_pong(self, event: dict[str, Any]) -> None:
        elapsed_ms = (time.time() - event["sent_at"]) * 1000
        runner = "Celery worker" if settings.TASK_RUNNER == "celery" else "in-process task"
        text = f"Round trip through {runner} {event['worker']} in {elapsed_ms:.0f} ms."
        html = render_to_string("core/_pipeline-result.html", {"ok": True, "text": text})
        await self.send(text_data=html)
