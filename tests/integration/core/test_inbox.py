"""Listening to groups through one receiver per event loop, on the deployed Redis channel
layer (pub/sub)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
import redis
from channels_redis.pubsub import RedisPubSubChannelLayer

from studio.lib import inbox

LISTENERS = 200


class CountingLayer(RedisPubSubChannelLayer):  # type: ignore[misc]
    """Counts the receives in flight at once."""

    def __init__(self, url: str) -> None:
        self.prefix = f"test-inbox-{uuid.uuid4().hex[:8]}"
        super().__init__(hosts=[url], prefix=self.prefix)
        self.url = url
        self.receiving = self.most_receiving = 0

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


@pytest.fixture
def layer(redis_service: str, monkeypatch: pytest.MonkeyPatch) -> CountingLayer:
    counting = CountingLayer(redis_service)
    monkeypatch.setattr(inbox, "get_channel_layer", lambda: counting)
    return counting


def test_many_listeners_share_one_receive_and_each_gets_only_its_group(
    layer: CountingLayer,
) -> None:
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
        await asyncio.sleep(0.5)  # the cancelled receive unwinds
        return received, receiver, layer.receiving, layer.subscribed()

    received, receiver, still_receiving, still_subscribed = asyncio.run(run())

    assert [[m["n"] for m in messages] for messages in received] == [[n] for n in range(LISTENERS)]
    assert layer.most_receiving == 1
    # Once nothing is listened to, the receive loop has stopped and nothing stays subscribed.
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
