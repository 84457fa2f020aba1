"""The Celery app. Reliability settings live in settings.py under ``CELERY_``.

Tasks are late-acknowledged and rejected when a worker dies, so a task may run
twice: every task claims its row with a conditional UPDATE before working.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")

app = Celery("studio")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _sweep_lost_steps(**_: Any) -> None:
    """Each worker also sweeps for work whose task was lost (studio/lib/sweep.py)."""
    from studio.lib.sweep import start_sweeper

    start_sweeper()
