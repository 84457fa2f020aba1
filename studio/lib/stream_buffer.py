"""The text a running step has streamed so far, for pages that (re)connect mid-step.

Why: deltas reach a page through the channel layer, which only delivers to sockets
already in the episode's group. A page that connects mid-step first renders the
step from the database, where the text is flushed about once a second, so the
deltas sent between that flush and the page joining the group would be missing
until the final fragment. Each coalesced delta is therefore also appended here,
with its sequence number, before it is sent: a page joins the group, then reads
this snapshot, and from then on takes only deltas newer than the snapshot, so it
holds every character exactly once.

Production keeps the buffer in Redis (the worker writes, the web process reads);
an embedded studio, where both run in one process, keeps it in memory. Either way
an entry lives at most ``TTL_S`` after its last write, and is dropped when the
step's final row is saved.

In Redis, an append is one Lua script (:data:`APPEND_SCRIPT`): atomic, as a MULTI/EXEC
of its six commands was, so a reader never sees text without its sequence number, but
one command for the worker to send and parse instead of eight, about half the worker's
CPU per append (``benchmarks/stream_buffer.py``).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from functools import cache

import redis
import redis.asyncio as aioredis
from django.conf import settings
from redis.commands.core import AsyncScript

#: An abandoned entry (a worker killed mid-step) goes away after this long.
TTL_S = 3600

#: KEYS: the seq, reasoning and observation keys; ARGV: seq, reasoning, observation, TTL.
APPEND_SCRIPT = """
redis.call('APPEND', KEYS[2], ARGV[2])
redis.call('APPEND', KEYS[3], ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[4])
"""


@dataclass(frozen=True)
class Snapshot:
    """Everything streamed up to delta ``seq``."""

    seq: int
    reasoning: str
    observation: str


_memory: dict[int, Snapshot] = {}
_memory_lock = threading.Lock()


def _keys(step_id: int) -> tuple[str, str, str]:
    base = f"studio:stream:{step_id}"
    return f"{base}:seq", f"{base}:reasoning", f"{base}:observation"


@cache
def _async_client(loop_id: int) -> aioredis.Redis:
    """One client per event loop (redis.asyncio connections belong to their loop)."""
    return aioredis.Redis.from_url(settings.REDIS_URL)


@cache
def _append_script(loop_id: int) -> AsyncScript:
    return _async_client(loop_id).register_script(APPEND_SCRIPT)


@cache
def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


async def append(step_id: int, seq: int, reasoning: str, observation: str) -> None:
    """Add one coalesced delta (call in ``seq`` order, before the delta is sent)."""
    if not settings.REDIS_URL:
        with _memory_lock:
            old = _memory.get(step_id) or Snapshot(0, "", "")
            _memory[step_id] = Snapshot(
                seq, old.reasoning + reasoning, old.observation + observation
            )
        return
    script = _append_script(id(asyncio.get_running_loop()))
    await script(keys=_keys(step_id), args=[seq, reasoning, observation, TTL_S])


def read(step_id: int) -> Snapshot | None:
    """What step ``step_id`` has streamed so far, or None when nothing is buffered."""
    if not settings.REDIS_URL:
        return _memory.get(step_id)
    values: list[bytes | None] = _client().mget(_keys(step_id))  # type: ignore[assignment]
    seq, reasoning, observation = values
    if seq is None:
        return None
    return Snapshot(
        int(seq),
        (reasoning or b"").decode("utf-8", "replace"),
        (observation or b"").decode("utf-8", "replace"),
    )


async def discard(step_id: int) -> None:
    """Drop the entry once the step's final text is in the database."""
    if not settings.REDIS_URL:
        with _memory_lock:
            _memory.pop(step_id, None)
        return
    await _async_client(id(asyncio.get_running_loop())).delete(*_keys(step_id))
