from __future__ import annotations

import time
import uuid
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string

from studio.core.tasks import pipeline_ping
from studio.lib.channels import group_name
from studio.lib.consumers import LiveConsumer
from studio.lib.tasks import dispatch


class StatusConsumer(LiveConsumer):
    """The status page's pipeline check: browser → task runner → channel layer → browser."""

    id_kwarg = None

    def join(self, user: Any, object_id: int | None) -> str:
        return group_name("status", uuid.uuid4().hex)  # this socket's own group

    def act(self, content: dict[str, Any]) -> str:
        if "ping" in content:
            dispatch(pipeline_ping, self.group, time.time())
        return ""

    def problem(self, message: str) -> str:
        return render_to_string("core/_pipeline-result.html", {"ok": False, "text": message})

    async def pong(self, event: dict[str, Any]) -> None:
        elapsed_ms = (time.time() - event["sent_at"]) * 1000
        runner = "Celery worker" if settings.TASK_RUNNER == "celery" else "in-process task"
        text = f"Round trip through {runner} {event['worker']} in {elapsed_ms:.0f} ms."
        await self.send_html(
            render_to_string("core/_pipeline-result.html", {"ok": True, "text": text})
        )
