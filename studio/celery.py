"""The Celery app. Reliability settings live in settings.py under ``CELERY_``.

Tasks are late-acknowledged and rejected when a worker dies, so a task may run
twice: every task claims its row with a conditional UPDATE before working.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_ready
from django.db import close_old_connections

from studio.lib.sweep import start_sweeper

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")

app = Celery("studio")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _sweep_lost_steps(**_: Any) -> None:
    """Each worker also sweeps for work whose task was lost (studio/lib/sweep.py)."""
    start_sweeper()


@task_prerun.connect
@task_postrun.connect
def _return_connections(**_: Any) -> None:
    """Give the task's database connections back to the pool (or drop broken ones).

    Stands in for the fixup's per-task close, which ``CELERY_DB_REUSE_MAX`` turns off
    because it also closed the pool: the pool now lives as long as the worker process.
    """
    close_old_connections()
