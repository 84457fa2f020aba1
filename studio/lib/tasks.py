"""Dispatch a task to Celery (production) or to a thread in this process (embedded).

Both paths run the same task function, so embedded mode exercises the code the
workers run. Dispatch waits for the surrounding transaction to commit, so a
task never looks for a row that is not visible yet.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from typing import Any

from celery import Task
from django.conf import settings
from django.db import close_old_connections, transaction

logger = logging.getLogger(__name__)


@cache
def _executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(
        max_workers=settings.INPROCESS_TASK_THREADS, thread_name_prefix="studio-task"
    )


def _run_inprocess(task: Task[Any, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    try:
        task(*args, **kwargs)
    except Exception:
        logger.exception("in-process task %s failed", task.name)
    finally:
        close_old_connections()


def dispatch(task: Task[Any, Any], *args: Any, **kwargs: Any) -> None:
    """Run ``task(*args, **kwargs)`` after the current transaction commits."""
    dispatch_later(0.0, task, *args, **kwargs)


def dispatch_later(delay_s: float, task: Task[Any, Any], *args: Any, **kwargs: Any) -> None:
    """Run ``task(*args, **kwargs)`` ``delay_s`` seconds after the current transaction
    commits. Keep ``delay_s`` under the visibility timeout: Celery holds a delayed
    message unacknowledged until it runs, and Redis would deliver it again.

    In embedded mode the wait is a daemon timer, gone if the process stops (as every
    in-process task is; the sweeps find the work again)."""
    if settings.TASK_RUNNER == "celery":
        countdown = max(delay_s, 0.0)  # Celery sends a countdown of 0 without an ETA
        transaction.on_commit(
            lambda: task.apply_async(args=args, kwargs=kwargs, countdown=countdown)
        )
        return

    def submit() -> None:
        future: Future[None] = _executor().submit(_run_inprocess, task, args, kwargs)
        _running.add(future)
        future.add_done_callback(_running.discard)

    if delay_s <= 0:
        transaction.on_commit(submit)
        return
    timer = threading.Timer(delay_s, submit)
    timer.daemon = True
    transaction.on_commit(timer.start)


_running: set[Future[None]] = set()


def wait_for_inprocess_tasks(timeout: float = 30.0) -> None:
    """Block until in-process tasks finish (used by tests and the CLI)."""
    for future in list(_running):
        future.result(timeout=timeout)
