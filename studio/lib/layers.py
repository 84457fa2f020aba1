"""An in-memory channel layer that in-process tasks can send to from their threads.

Channels' ``InMemoryChannelLayer`` keeps asyncio queues that belong to the
server's event loop; putting into them from a task thread's own loop does not
wake the server. This layer runs every send on the loop that receives.

It is also cheaper per group send, which an embedded studio makes several times a
step: Channels' layer looks through every channel and group for expired entries
on each send and receive, and starts a task for each member it sends to. With an
episode's group per open environment, that was a tenth of an embedded studio's
CPU under load (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Coroutine
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer


class InProcessChannelLayer(InMemoryChannelLayer):  # type: ignore[misc]
    #: How often expired messages and group memberships are looked for. Messages expire
    #: after a minute and memberships after a day, so looking once a second instead of
    #: on every call changes nothing anyone can see.
    CLEAN_EVERY_S = 1.0
    _home: asyncio.AbstractEventLoop | None = None
    _cleaned_at = float("-inf")

    async def receive(self, channel: str) -> dict[str, Any]:
        # The first loop that listens is the server's; short-lived loops must not take over.
        if self._home is None or self._home.is_closed():
            self._home = asyncio.get_running_loop()
        message: dict[str, Any] = await super().receive(channel)
        return message

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        await self._on_home_loop(super().send(channel, message))

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await self._on_home_loop(self._send_to_members(group, message))

    async def _send_to_members(self, group: str, message: dict[str, Any]) -> None:
        """Channels' group send, one member after the other: a send only puts a copy
        into the member's queue, so a task per member bought nothing."""
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            with contextlib.suppress(ChannelFull):  # as Channels does: that member misses it
                await super().send(channel, message)

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned_at >= self.CLEAN_EVERY_S:
            self._cleaned_at = now
            super()._clean_expired()

    async def _on_home_loop(self, operation: Coroutine[Any, Any, None]) -> None:
        home = self._home
        if home is None or home.is_closed() or home is asyncio.get_running_loop():
            await operation
            return
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(operation, home))
