"""Giving a thread's database connection back before it waits.

Why: with a pool per process (``STUDIO_DB_POOL_SIZE``), a thread that holds its
connection while it waits (for a step, for an endpoint slot, for the model) keeps
it from everyone else; enough such threads and the ones doing real work find the
pool empty. Every place that waits calls :func:`release_connection` first.
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import heapq
import itertools
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection

T = TypeVar("T")


def release_connection() -> None:
    """Give this thread's pooled connection back to the pool.

    Unpooled connections (SQLite in embedded mode, where nothing is scarce) are kept,
    and so is one inside a transaction: closing it there would roll the transaction
    back under the caller's feet.
    """
    pooled = connection.settings_dict.get("OPTIONS", {}).get("pool")
    if pooled and not connection.in_atomic_block:
        connection.close()


class Priority(enum.IntEnum):
    """Which database calls go first when they queue: finishing work before new work.

    Under overload, a step that has already run is answered before anything else, and
    a new request is let in only when nothing older waits, so the studio keeps
    completing steps at its full rate instead of starting more than it can finish.
    """

    FINISH = 0  # answering for a step that has run
    WAIT = 1  # reading a step that is being waited for
    START = 2  # a new request


class _Gate:
    """A semaphore whose waiters are served by :class:`Priority`, then in arrival order."""

    def __init__(self, slots: int) -> None:
        self.free = max(1, slots)
        self.waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self.arrivals = itertools.count()

    async def acquire(self, priority: Priority) -> None:
        if self.free > 0 and not self.waiting:
            self.free -= 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self.waiting, (priority, next(self.arrivals), turn))
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # handed the slot just as it was cancelled: pass it on
            raise

    def release(self) -> None:
        while self.waiting:
            _, _, turn = heapq.heappop(self.waiting)
            if not turn.done():
                turn.set_result(None)
                return
        self.free += 1


@dataclass
class _Lane:
    """One event loop's way to the database: its gate, and the threads behind it.

    The threads are the loop's own and live as long as it does. Why not Django's
    ``sync_to_async``: inside a request it runs calls in a thread made for that request
    (``ThreadSensitiveContext``), so every API call started a thread and built a new
    database wrapper in it; as many long-lived threads as slots reuse both. Even given
    these threads, ``sync_to_async`` costs about 110 µs of CPU per call against 66 µs
    for the executor handoff done here, and a step makes several such calls.
    """

    gate: _Gate
    threads: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(
            max_workers=max(1, settings.DB_CONCURRENCY), thread_name_prefix="db-call"
        )
    )


_lanes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Lane] = weakref.WeakKeyDictionary()


async def db_call(function: Callable[..., T], *args: Any, priority: Priority = Priority.START) -> T:
    """``function(*args)`` in a thread, once one of this loop's database slots is free
    (``DB_CONCURRENCY``, below the pool's size); queued calls go by ``priority``.

    Why: thousands of requests in flight on one event loop would otherwise each take
    a thread and ask the pool for a connection at once; past the pool's timeout they
    fail. Queued here, they wait as coroutines and the pool never runs dry: each call
    gives its connection back before it leaves its slot, so no more connections are
    out than slots.
    """
    loop = asyncio.get_running_loop()
    lane = _lanes.get(loop)
    if lane is None:
        lane = _lanes[loop] = _Lane(_Gate(settings.DB_CONCURRENCY))

    def call() -> T:
        try:
            return function(*args)
        finally:
            release_connection()

    await lane.gate.acquire(priority)
    try:
        if settings.DB_CALLS_IN_REQUEST_THREAD:
            result: T = await sync_to_async(call)()
        else:
            context = contextvars.copy_context()
            result = await loop.run_in_executor(lane.threads, context.run, call)
        return result
    finally:
        lane.gate.release()
