from __future__ import annotations

import time
from typing import Any

from celery import Task, shared_task

from studio.lib.channels import PONG, send_to_group


@shared_task(bind=True, name="core.pipeline_ping")
def pipeline_ping(self: Task[Any, Any], group: str, sent_at: float) -> None:
    """Answer the status page's pipeline check through the channel layer."""
    send_to_group(
        group,
        {
            "type": PONG,
            "sent_at": sent_at,
            "handled_at": time.time(),
            # A Celery worker's node name ("w1@host"); in-process tasks have none.
            "worker": self.request.hostname or "in this process",
        },
    )
