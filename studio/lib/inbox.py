"""Listening to channel-layer groups from coroutines, through one receiver per event loop.

Why: every waiting env API call listens to its episode's step-ends group. With a
channel each, a process would subscribe and unsubscribe a channel per call and keep a
receive per waiter; with the list-based Redis layer this studio used before, those
receives shared one Redis key behind one lock, and one cancelled by a timeout took
seconds to unwind (1 s waits under 256 sessions came back after 12-40 s). So each
event loop keeps one channel and one receive loop; a group is joined once however many
waiters listen to it, and a waiter reads an in-process queue, which is safe to wait on
with a timeout.

A group send does not say which group it went through, so a message sent to a group
listened to here names it (:func:`addressed`).

A group stays joined for ``LINGER_S`` after its last listener leaves. Why: an RL
trainer steps the same environment again and again, a wait per step; joining and
leaving the group around each one cost two Redis round trips and about 7% of the web
process's CPU per step. A sweep leaves the groups idle that long, and once nothing is
joined the receive loop is cancelled (the pub/sub layer then drops the channel's
subscription).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: The messages of one group, from the moment its listener joined.
Inbox = asyncio.Queue[dict[str, Any]]

#: Seconds a group stays joined after its last listener left.
LINGER_S = 30.0


def addressed(group: str, message: dict[str, Any]) -> dict[str, Any]:
    """``message`` as sent to ``group`` when coroutines listen to it through this module."""
    return {**message, "group": group}


@dataclass
class _Group:
    """One group's listeners here; the lock orders its joins and the sweep's leave."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    inboxes: set[Inbox] = field(default_factory=set)
    channel: str = ""  # the receiver's channel while the group is joined, else ""
    joining: int = 0  # listeners on their way in: the group is not idle meanwhile
    idle_since: float = field(default_factory=time.monotonic)

    def idle(self, now: float) -> bool:
        """Whether nobody has listened to the group, or been joining it, for ``LINGER_S``."""
        return not self.inboxes and not self.joining and now - self.idle_since >= LINGER_S


class _Receiver:
    """One event loop's channel, its receive loop, and the groups it is in."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.channel = ""
        self.task: asyncio.Task[None] | None = None
        self.sweeper: asyncio.Task[None] | None = None
        self.starting = asyncio.Lock()  # one channel at a time: a second would never be dropped
        self.groups: dict[str, _Group] = {}

    async def join(self, group: str) -> Inbox:
        entry = self.groups.setdefault(group, _Group())
        entry.joining += 1
        if self.sweeper is None or self.sweeper.done():
            self.sweeper = asyncio.ensure_future(self._sweep())
        inbox: Inbox = asyncio.Queue()
        try:
            async with entry.lock:
                if not entry.channel:
                    joined = await _best_effort(self._joined(group), "joining " + group)
                    entry.channel = joined or ""
                entry.inboxes.add(inbox)
        finally:
            entry.joining -= 1
            entry.idle_since = time.monotonic()
        return inbox

    def leave(self, group: str, inbox: Inbox) -> None:
        """Stop listening; the group itself is left by the sweep, once idle."""
        entry = self.groups[group]
        entry.inboxes.discard(inbox)
        entry.idle_since = time.monotonic()

    async def _sweep(self) -> None:
        """Leave the groups idle for ``LINGER_S``; stop receiving once none is left."""
        while self.groups:
            await asyncio.sleep(LINGER_S / 2)
            now = time.monotonic()
            for group, entry in list(self.groups.items()):
                if entry.idle(now):
                    await self._leave_idle(group, entry)
        self._stop()

    async def _leave_idle(self, group: str, entry: _Group) -> None:
        async with entry.lock:  # a join meanwhile waits, then joins again
            if not entry.idle(time.monotonic()):
                return
            channel, entry.channel = entry.channel, ""
            if channel:
                await _best_effort(self.layer.group_discard(group, channel), "leaving " + group)
            if entry.idle(time.monotonic()):
                del self.groups[group]

    async def _joined(self, group: str) -> str:
        """The receiver's channel, now in ``group``."""
        async with self.starting:
            if self.task is None or self.task.done():
                self.channel = await self.layer.new_channel()
                self.task = asyncio.ensure_future(self._receive(self.channel))
            channel = self.channel
        await self.layer.group_add(group, channel)
        return channel

    def _stop(self) -> None:
        # Forgotten first, so that a join meanwhile starts a new channel.
        task, self.task = self.task, None
        if task is not None:
            task.cancel()

    async def _receive(self, channel: str) -> None:
        while True:
            try:
                message: dict[str, Any] = await self.layer.receive(channel)
            except Exception:  # the layer's server went away: the waiters poll meanwhile
                logger.warning("receiving on %s failed; trying again", channel, exc_info=True)
                await asyncio.sleep(1)
                continue
            entry = self.groups.get(message.get("group", ""))
            for inbox in entry.inboxes if entry is not None else ():
                inbox.put_nowait(message)


async def _best_effort(operation: Awaitable[T], what: str) -> T | None:
    """What ``operation`` returns, or None when it failed. Why not raise: a waiter that
    misses its group's messages still polls the database, and an env call must not fail
    over it."""
    try:
        return await operation
    except Exception:
        logger.warning("%s failed", what, exc_info=True)
        return None


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
        receiver.leave(group, inbox)
