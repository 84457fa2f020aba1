"""Per-token rate limits: a token bucket in Redis (production) or in this process (embedded).

A bucket holds up to ``API_RATE_BURST`` requests and refills at ``API_RATE_PER_S``.
:func:`rate_limit_take` returns 0 when a request may go ahead, else the seconds
until one token is back (the ``Retry-After`` the API answers with).
"""

from __future__ import annotations

import threading
import time
from functools import cache
from typing import Any

import redis
from django.conf import settings

# Redis' own clock, so that web processes on several hosts share one notion of "now".
_TAKE = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local data = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(data[1]) or burst
local ts = tonumber(data[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 1)
return tostring(wait)
"""


@cache
def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


@cache
def _take_script() -> redis.commands.core.AsyncScript | redis.commands.core.Script:
    return _redis().register_script(_TAKE)


class MemoryBuckets:
    """Token buckets in this process (embedded mode: one web process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str, rate: float, burst: int) -> float:
        now = time.monotonic()
        with self._lock:
            tokens, ts = self._buckets.get(key, (float(burst), now))
            tokens = min(float(burst), tokens + (now - ts) * rate)
            wait = 0.0
            if tokens >= 1:
                tokens -= 1
            else:
                wait = (1 - tokens) / rate
            self._buckets[key] = (tokens, now)
            return wait

    def clear(self) -> None:
        with self._lock:
            self._buckets.clear()


memory_buckets = MemoryBuckets()


def rate_limit_take(key: str) -> float:
    """Take one request from ``key``'s bucket; the seconds to wait when it is empty, else 0."""
    rate = float(settings.API_RATE_PER_S)
    burst = int(settings.API_RATE_BURST)
    if rate <= 0:
        return 0.0
    if settings.EMBEDDED:
        return memory_buckets.take(key, rate, burst)
    wait: Any = _take_script()(keys=[f"studio:ratelimit:{key}"], args=[rate, burst])
    return float(wait.decode() if isinstance(wait, bytes) else wait)
