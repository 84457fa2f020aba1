"""channels_redis's pub/sub layer, taking a Redis restart without failing the caller.

Why this layer: a group send is one PUBLISH and a process subscribes to a group once,
however many of its consumers or waiters are in it, where the list-based
``RedisChannelLayer`` costs four round trips and a Lua script per group send
(docs/performance.md).

Why the subclass: after Redis restarts, the first command on the layer's subscriber
connection fails with ``ConnectionError`` (redis-py reconnects it, and subscribes it
again to what it had, only on the next command). A browser that reconnected at that
moment had its consumer's join fail, and got an HTTP 500. Here each operation that
meets a closed connection runs again, a few times with a short pause, on the connection
redis-py has meanwhile made anew; only Redis staying down fails it.

A send retried after a failure that happened once Redis had taken the PUBLISH may be
delivered twice; the studio's messages carry sequence numbers or whole fragments, so
pages take a repeat as a no-op.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from channels_redis.pubsub import RedisPubSubChannelLayer
from redis.exceptions import ConnectionError as RedisConnectionError

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Tries per operation, and the pause before the n-th retry (n x this).
ATTEMPTS = 4
RETRY_PAUSE_S = 0.2


class ReconnectingPubSubChannelLayer(RedisPubSubChannelLayer):  # type: ignore[misc]
    async def new_channel(self, prefix: str = "specific.") -> str:
        # Named here, so that a retry subscribes the same channel instead of leaving a
        # second, never-used one in the layer's table.
        layer = self._get_layer()
        channel = f"{layer.prefix}{prefix}{uuid.uuid4().hex}"
        await _retried(lambda: layer._subscribe_to_channel(channel), "subscribing " + channel)
        return channel

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        layer = self._get_layer()
        await _retried(lambda: layer.send(channel, message), "sending to " + channel)

    async def group_add(self, group: str, channel: str) -> None:
        layer = self._get_layer()
        await _retried(lambda: layer.group_add(group, channel), "joining " + group)

    async def group_discard(self, group: str, channel: str) -> None:
        layer = self._get_layer()
        await _retried(lambda: layer.group_discard(group, channel), "leaving " + group)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        layer = self._get_layer()
        await _retried(lambda: layer.group_send(group, message), "sending to " + group)


async def _retried(operation: Callable[[], Coroutine[Any, Any, T]], what: str) -> T:
    attempt = 1
    while True:
        try:
            return await operation()
        except RedisConnectionError:
            if attempt == ATTEMPTS:
                raise
            logger.info("%s met a closed Redis connection; trying again", what)
            await asyncio.sleep(RETRY_PAUSE_S * attempt)
            attempt += 1
