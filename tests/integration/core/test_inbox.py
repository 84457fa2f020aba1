"""Listening to groups through one receiver per event loop, on the deployed Redis channel
layer (pub/sub)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import redis
from channels_redis.pubsub import RedisPubSubChannelLayer

from studio.lib import inbox

LISTENERS = 200


class CountingLayer(RedisPubSubChannelLayer):  # type: ignore[misc]
    """Counts the receives in flight at once, and the groups joined."""

    def __init__(self, url: str) -> None:
        self.prefix = f"test-inbox-{uuid.uuid4().hex[:8]}"
        super().__init__(hosts=[url], prefix=self.prefix)
        self.url = url
        self.receiving = self.most_receiving = 0
        self.joins = 0

    async def group_add(self, group: str, channel: str) -> None:
        self.joins += 1
        await self._get_layer().group_add(group, channel)

    async def receive(self, channel: str) -> dict[str, Any]:
        self.receiving += 1
        self.most_receiving = max(self.most_receiving, self.receiving)
        try:
            message: dict[str, Any] = await self._get_layer().receive(channel)
            return message
        finally:
            self.receiving -= 1

    def subscribed(self) -> int:
        """Redis's count of this layer's subscribed channels (groups and the inbox's own)."""
        with redis.Redis.from_url(self.url) as client:
            return len(client.pubsub_channels(f"{self.prefix}*"))


async def until(condition: Callable[[], bool], seconds: float = 10) -> None:
    """Wait for ``condition``: the sweep leaves idle groups on its own schedule."""
    give_up = time.monotonic() + seconds
    while not condition() and time.monotonic() < give_up:
        await asyncio.sleep(0.05)


@pytest.fixture
def layer(redis_service: str, monkeypatch: pytest.MonkeyPatch) -> CountingLayer:
    counting = CountingLayer(redis_service)
    monkeypatch.setattr(inbox, "get_channel_layer", lambda: counting)
    return counting


def test_many_listeners_share_one_receive_and_each_gets_only_its_group(
    layer: CountingLayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbox, "LINGER_S", 0.1)

    async def listen(number: int, everyone_in: asyncio.Barrier) -> list[dict[str, Any]]:
        group = f"g-{number}"
        async with inbox.listening(group) as listened:
            assert listened is not None
            await everyone_in.wait()
            await layer.group_send(group, inbox.addressed(group, {"type": "t", "n": number}))
            # A wait with a timeout that runs out costs nothing: the queue is in-process.
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(asyncio.Event().wait(), 0.01)
            first = await asyncio.wait_for(listened.get(), 30)
            return [first, *(listened.get_nowait() for _ in range(listened.qsize()))]

    async def run() -> tuple[list[list[dict[str, Any]]], inbox._Receiver, int, int]:
        everyone_in = asyncio.Barrier(LISTENERS)
        received = await asyncio.gather(*(listen(n, everyone_in) for n in range(LISTENERS)))
        receiver = inbox._receivers[asyncio.get_running_loop()]
        await until(lambda: not receiver.groups and layer.receiving == 0)
        return received, receiver, layer.receiving, layer.subscribed()

    received, receiver, still_receiving, still_subscribed = asyncio.run(run())

    assert [[m["n"] for m in messages] for messages in received] == [[n] for n in range(LISTENERS)]
    assert layer.most_receiving == 1
    # Once nothing has been listened to for a while, the groups are left, the receive
    # loop has stopped and nothing stays subscribed.
    assert receiver.groups == {} and receiver.task is None and still_receiving == 0
    assert still_subscribed == 0


def test_a_group_stays_joined_while_one_of_its_listeners_remains(layer: CountingLayer) -> None:
    async def run() -> list[int]:
        async with inbox.listening("shared") as first:
            async with inbox.listening("shared") as second:
                assert first is not None and second is not None
            subscribed = layer.subscribed()  # the group and the receiver's channel
            await layer.group_send("shared", inbox.addressed("shared", {"type": "t", "n": 1}))
            message = await asyncio.wait_for(first.get(), 30)
            return [message["n"], second.qsize(), subscribed]

    assert asyncio.run(run()) == [1, 0, 2]


def test_an_environment_stepped_again_and_again_joins_its_group_once(
    layer: CountingLayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbox, "LINGER_S", 1.0)

    async def run() -> tuple[list[int], int, int]:
        received = []
        for step in range(5):  # one wait per step, one after the other
            async with inbox.listening("env-1") as listened:
                assert listened is not None
                await layer.group_send("env-1", inbox.addressed("env-1", {"type": "t", "n": step}))
                received.append((await asyncio.wait_for(listened.get(), 30))["n"])
        lingering = layer.subscribed()  # the group and the receiver's channel
        await until(lambda: layer.subscribed() == 0)
        return received, lingering, layer.subscribed()

    received, lingering, after = asyncio.run(run())

    assert received == [0, 1, 2, 3, 4]
    assert layer.joins == 1
    assert lingering == 2 and after == 0
