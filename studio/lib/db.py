"""Giving a thread's database connection back before it waits.

Why: with a pool per process (``STUDIO_DB_POOL_SIZE``), a thread that holds its
connection while it waits (for a step, for an endpoint slot, for the model) keeps
it from everyone else; enough such threads and the ones doing real work find the
pool empty. Every place that waits calls :func:`release_connection` first.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
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


_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


async def db_call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` in a thread, once one of this loop's database slots
    is free (``DB_CONCURRENCY``, below the pool's size).

    Why: thousands of requests in flight on one event loop would otherwise each take
    a thread and ask the pool for a connection at once; past the pool's timeout they
    fail. Queued here, they wait as coroutines, in order, and the pool never runs dry:
    each call gives its connection back before it leaves its slot, so no more
    connections are out than slots.
    """
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        gate = _gates[loop] = asyncio.Semaphore(settings.DB_CONCURRENCY)

    def call() -> T:
        try:
            return function(*args, **kwargs)
        finally:
            release_connection()

    async with gate:
        result: T = await sync_to_async(call)()
        return result
