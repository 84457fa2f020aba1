"""An in-memory channel layer that in-process tasks can send to from their threads.

Channels' ``InMemoryChannelLayer`` keeps asyncio queues that belong to the
server's event loop; putting into them from a task thread's own loop does not
wake the server. This layer runs every send on the loop that receives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from channels.layers import InMemoryChannelLayer


class InProcessChannelLayer(InMemoryChannelLayer):  # type: ignore[misc]
    _home: asyncio.AbstractEventLoop | None = None

    async def receive(self, channel: str) -> dict[str, Any]:
        # The first loop that listens is the server's; short-lived loops must not take over.
        if self._home is None or self._home.is_closed():
            self._home = asyncio.get_running_loop()
        message: dict[str, Any] = await super().receive(channel)
        return message

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        await self._on_home_loop(super().send(channel, message))

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await self._on_home_loop(super().group_send(group, message))

    async def _on_home_loop(self, operation: Coroutine[Any, Any, None]) -> None:
        home = self._home
        if home is None or home.is_closed() or home is asyncio.get_running_loop():
            await operation
            return
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(operation, home))
