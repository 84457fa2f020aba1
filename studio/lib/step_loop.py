"""One event loop per process that holds every in-flight model call.

Why: a step spends almost all of its time waiting for the world model. If each
step ran on an event loop of its own inside a worker slot (a prefork child, a task
thread), that slot would be held for the whole model call, and throughput would be
capped at ``slots / model latency`` whatever the model server could take. Here a
task's thread (a Celery thread-pool worker, or an embedded studio's task thread)
hands its coroutine to this loop and only waits for it, so one process keeps
hundreds of steps in flight. What each in-flight step costs is a coroutine, not a
process.

Sharing the loop also shares what is costly to make per step: the HTTP
connection pool of each world-model endpoint (:func:`backend_for`), the channel
layer's Redis connections, and a small fixed set of database threads
(:func:`run_db`, ``STEP_DB_THREADS``), so the database connections steps use are
bounded however many are in flight. :func:`endpoint_slot` caps the model calls in
flight per endpoint (``ENDPOINT_MAX_IN_FLIGHT``, or the endpoint's
``config["max_in_flight"]``), sized for what the model server batches rather than
for the number of workers.

The loop is uvloop's, as uvicorn's is in the web process: a worker's step is mostly
event-loop work (the HTTP exchange with the model server, Redis publishes, handing
database calls to threads), and uvloop does that work for about a tenth less of the
worker's CPU per step than asyncio's default loop (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import queue
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any, TypeVar

import uvloop
from django.conf import settings
from django.db import close_old_connections

from simulator.backends import Backend, create_backend
from studio.lib.db import release_connection

T = TypeVar("T")

LOOP_THREAD = "step-loop"
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _running_loop() -> asyncio.AbstractEventLoop:
    """The process's step loop, started in a daemon thread on first use."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = uvloop.new_event_loop()
            threading.Thread(target=loop.run_forever, name=LOOP_THREAD, daemon=True).start()
            _loop = loop
        return _loop


@atexit.register
def _close_shared_backends() -> None:
    """Close the shared HTTP clients at exit, so their connections end cleanly."""
    if _loop is None or _loop.is_closed() or not _backends:
        return

    async def close_all() -> None:
        for backend in _backends.values():
            with contextlib.suppress(Exception):
                await backend.aclose()
        _backends.clear()

    with contextlib.suppress(Exception):
        asyncio.run_coroutine_threadsafe(close_all(), _loop).result(timeout=5)


def run_on_step_loop(make: Callable[[], Coroutine[Any, Any, T]], *, release_db: bool = True) -> T:
    """Run ``make()`` on the step loop and wait for its result in this thread.

    The calling thread only waits (with ``release_db``, its database connection
    goes back to the pool first; a short wait need not), and takes no CPU meanwhile;
    an exception in the coroutine is raised here, as if it had run in this thread.
    """
    loop = _running_loop()
    if threading.current_thread().name == LOOP_THREAD:
        raise RuntimeError("run_on_step_loop() called on the step loop itself; await instead")
    if release_db:
        release_connection()
    return asyncio.run_coroutine_threadsafe(make(), loop).result()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()


def stream_on_step_loop(
    make: Callable[[Callable[[T], None]], Coroutine[Any, Any, None]],
) -> Iterator[T]:
    """Run ``make(put)`` on the step loop; yield here each item it ``put``s, as it comes.

    For work that saves results as they arrive (simulated turns, judge scores): the
    coroutine holds the model calls, the calling thread does the database writes
    (Django connections belong to it). An exception in the coroutine is raised here,
    after the items put before it; leaving the loop early cancels the coroutine.
    """
    items: queue.SimpleQueue[Any] = queue.SimpleQueue()

    async def run() -> None:
        try:
            await make(items.put)
        except BaseException as exc:  # handed to the consuming thread
            items.put(_Failed(exc))
        else:
            items.put(_END)

    release_connection()
    future = asyncio.run_coroutine_threadsafe(run(), _running_loop())
    try:
        while (item := items.get()) is not _END:
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        future.cancel()


@cache
def _db_executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=settings.STEP_DB_THREADS, thread_name_prefix="step-db")


def _in_db_thread(function: Callable[..., T], *args: Any) -> T:
    """Each of the few database threads keeps its connection between calls (no pool
    round trip per query); one that failed is dropped, and the next call reconnects."""
    try:
        return function(*args)
    except Exception:
        close_old_connections()
        raise


async def run_db(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` on one of the step loop's database threads.

    Django connections belong to a thread, so database work never runs on the
    loop itself; a fixed set of threads bounds the connections all in-flight steps
    of this process hold at once.
    """
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_db_executor(), _in_db_thread, function, *args)


_backends: dict[str, Backend] = {}


def backend_for(spec: Mapping[str, Any]) -> tuple[Backend, bool]:
    """A backend for ``spec``, and whether it is shared (the caller must not close it).

    Server backends (``openai``) are stateless per request and keep a connection
    pool, so every step to the same endpoint shares one; the others (local, replay,
    scripted) keep per-use state and are made fresh. Call on the step loop only.
    """
    if spec.get("kind") != "openai":
        return create_backend(spec), False
    key = json.dumps(spec, sort_keys=True, default=str)
    backend = _backends.get(key)
    if backend is None:
        backend = _backends[key] = create_backend(spec)
    return backend, True


_slots: dict[str, tuple[int, asyncio.Semaphore]] = {}


def endpoint_slot(key: str, limit: int) -> asyncio.Semaphore:
    """The semaphore capping model calls in flight to endpoint ``key`` from this process.

    A changed limit takes effect for calls that start after the change.
    """
    current = _slots.get(key)
    if current is None or current[0] != limit:
        current = _slots[key] = (limit, asyncio.Semaphore(max(1, limit)))
    return current[1]
