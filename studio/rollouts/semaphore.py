"""How many rollout model calls may be in flight per endpoint, across every worker.

A rollout job starts many episodes at once, so its cap must hold across all worker
processes (``STUDIO_ROLLOUT_ENDPOINT_CONCURRENCY``). The per-process cap every step
passes as well is :func:`studio.lib.step_loop.endpoint_slot`.

Production: a Redis sorted set per endpoint whose members are slot holders,
scored by when their lease expires. Acquiring drops expired members first, so
the slot of a worker that was killed comes back once its lease runs out.
Embedded: a threading semaphore per endpoint in this process.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

import redis
from django.conf import settings

from studio.lib.db import release_connection

_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 60)
  return 1
end
return 0
"""


@cache
def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


@cache
def _acquire_script() -> redis.commands.core.Script:
    return _redis().register_script(_ACQUIRE)


_local_lock = threading.Lock()
_local: dict[tuple[str, int], threading.BoundedSemaphore] = {}


def _local_semaphore(key: str, limit: int) -> threading.BoundedSemaphore:
    with _local_lock:
        return _local.setdefault((key, limit), threading.BoundedSemaphore(limit))


def redis_key(key: str) -> str:
    return f"studio:semaphore:{key}"


@contextmanager
def shared_endpoint_slot(
    key: str, *, limit: int, lease_s: float, poll_s: float = 0.05
) -> Iterator[None]:
    """Hold one of ``limit`` slots of ``key`` for the ``with`` block (waits for a free one).

    ``lease_s`` bounds how long a dead holder keeps its slot; it must exceed the
    longest call made inside the block (a task's time limit does).
    """
    release_connection()  # the wait may be long; the pool is not ours meanwhile
    if settings.EMBEDDED:
        semaphore = _local_semaphore(key, limit)
        semaphore.acquire()
        try:
            yield
        finally:
            semaphore.release()
        return
    member = uuid.uuid4().hex
    while not _acquire_script()(keys=[redis_key(key)], args=[limit, lease_s, member]):
        time.sleep(poll_s)
    try:
        yield
    finally:
        _redis().zrem(redis_key(key), member)
