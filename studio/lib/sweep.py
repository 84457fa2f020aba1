"""The sweeper: finds work whose task was lost and sends the task again.

A task can vanish: Redis restarted without persistence, a message dropped, an
embedded studio stopped mid-task. Redelivery covers a worker that dies; nothing
covers a message that is gone. Each app registers a sweep (in its
``AppConfig.ready``) that finds its own lost work and dispatches it again; the
work's task claims it with a conditional UPDATE, so sending twice is safe. Every
worker, and an embedded studio, runs the sweeps every ``SWEEP_EVERY_S``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import close_old_connections

logger = logging.getLogger(__name__)

Sweep = Callable[[], int]
SWEEPS: list[Sweep] = []
_started = threading.Event()


def register(sweep: Sweep) -> Sweep:
    """Add ``sweep`` (returns how many items it sent again) to what the sweeper runs."""
    if sweep not in SWEEPS:
        SWEEPS.append(sweep)
    return sweep


def sweep_all() -> int:
    """Run every registered sweep once; a failing one does not stop the others."""
    total = 0
    for sweep in SWEEPS:
        try:
            found = sweep()
        except Exception:  # the database away for a moment: next round
            logger.exception("sweep %s failed; trying again later", sweep.__qualname__)
            continue
        if found:
            logger.warning("%s: sent %d lost item(s) again", sweep.__qualname__, found)
        total += found
    return total


def start_sweeper() -> None:
    """Sweep in a daemon thread of this process, every ``SWEEP_EVERY_S`` (once per process)."""
    every = settings.SWEEP_EVERY_S
    if every <= 0 or _started.is_set():
        return
    _started.set()

    def loop() -> None:
        pause = threading.Event()
        while True:
            try:
                sweep_all()
            finally:
                close_old_connections()
            pause.wait(every)

    threading.Thread(target=loop, name="sweeper", daemon=True).start()
