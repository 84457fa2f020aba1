"""Listening to channel-layer groups from coroutines, through one receiver per event loop.

Why: channels_redis serves all of a process's channels from one Redis key behind one
receive lock, and a ``receive`` cancelled by a timeout can take seconds to unwind.
When every waiting env API call had a channel of its own and waited on it with a
timeout, 1 s waits under 256 concurrent sessions came back after 12-40 s, and calls
whose step had long ended timed out. So each event loop keeps one channel and one
receive loop that is never cancelled; a waiter gets its group's messages from an
in-process queue, which is safe to wait on with a timeout.

A group send does not say which group it went through, so a message sent to a group
listened to here names it (:func:`addressed`). The receive loop stops, by a message
to itself rather than a cancelled receive, once nothing is listened to.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any

from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

#: The messages of one group, from the moment its listener joined.
Inbox = asyncio.Queue[dict[str, Any]]

_STOP = "inbox.stop"


def addressed(group: str, message: dict[str, Any]) -> dict[str, Any]:
    """``message`` as sent to ``group`` when coroutines listen to it through this module."""
    return {**message, "group": group}


@dataclass
class _Group:
    """One group's listeners here; the lock orders its joins and leaves."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    inboxes: set[Inbox] = field(default_factory=set)
    channel: str = ""  # the receiver's channel when the group was joined
    users: int = 0  # listeners joining, listening or leaving: the entry lives while > 0


class _Receiver:
    """One event loop's channel, its receive loop, and the groups it is in."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.channel = ""
        self.task: asyncio.Task[None] | None = None
        self.groups: dict[str, _Group] = {}

    async def join(self, group: str) -> Inbox:
        entry = self.groups.setdefault(group, _Group())
        entry.users += 1
        inbox: Inbox = asyncio.Queue()
        async with entry.lock:
            if not entry.inboxes:
                entry.channel = await self._started()
                await _best_effort(self.layer.group_add(group, entry.channel), "joining " + group)
            entry.inboxes.add(inbox)
        return inbox

    async def leave(self, group: str, inbox: Inbox) -> None:
        entry = self.groups[group]
        try:
            async with entry.lock:
                entry.inboxes.discard(inbox)
                if not entry.inboxes:
                    await _best_effort(
                        self.layer.group_discard(group, entry.channel), "leaving " + group
                    )
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self.groups[group]
            if not self.groups:
                await self._stop()

    async def _started(self) -> str:
        if self.task is None or self.task.done():
            channel = await self.layer.new_channel()
            if self.task is None or self.task.done():  # no other join started one meanwhile
                self.channel = channel
                self.task = asyncio.ensure_future(self._receive(channel))
        return self.channel

    async def _stop(self) -> None:
        # Forgotten before the send, so that a join meanwhile starts a new channel.
        task, channel, self.task = self.task, self.channel, None
        if task is not None and not task.done():
            stop = self.layer.send(channel, {"type": _STOP})
            if not await _best_effort(stop, "stopping the receiver"):
                task.cancel()  # slow to unwind, but nothing waits for it

    async def _receive(self, channel: str) -> None:
        while True:
            try:
                message: dict[str, Any] = await self.layer.receive(channel)
            except Exception:  # the layer's server went away: the waiters poll meanwhile
                logger.warning("receiving on %s failed; trying again", channel, exc_info=True)
                await asyncio.sleep(1)
                continue
            if message.get("type") == _STOP:
                return
            entry = self.groups.get(message.get("group", ""))
            for inbox in entry.inboxes if entry is not None else ():
                inbox.put_nowait(message)


async def _best_effort(operation: Awaitable[None], what: str) -> bool:
    """Whether ``operation`` went through. Why not raise: a waiter that misses its
    group's messages still polls the database, and an env call must not fail over it."""
    try:
        await operation
    except Exception:
        logger.warning("%s failed", what, exc_info=True)
        return False
    return True


_receivers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Receiver] = (
    weakref.WeakKeyDictionary()
)


@contextlib.asynccontextmanager
async def listening(group: str) -> AsyncIterator[Inbox | None]:
    """An inbox of ``group``'s messages for as long as the block runs; None with no
    channel layer. Messages reach it from the moment the block is entered."""
    layer = get_channel_layer()
    if layer is None:
        yield None
        return
    loop = asyncio.get_running_loop()
    receiver = _receivers.get(loop)
    if receiver is None or receiver.layer is not layer:
        receiver = _receivers[loop] = _Receiver(layer)
    inbox = await receiver.join(group)
    try:
        yield inbox
    finally:
        await receiver.leave(group, inbox)
