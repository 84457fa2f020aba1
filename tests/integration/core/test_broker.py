"""The Redis broker transport (studio/lib/broker.py) on a real Redis: one client per
channel and pool, and messages still published, delivered and acknowledged."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kombu import Connection, Exchange, Queue
from kombu.transport import redis as kombu_redis

from studio.lib import broker


@pytest.fixture
def clients_made(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every synchronous Redis client the transport's channels build."""
    made: list[Any] = []
    build = kombu_redis.Channel._create_client  # type: ignore[attr-defined]

    def counting(self: Any, asynchronous: bool = False) -> Any:
        client = build(self, asynchronous)
        if not asynchronous:
            made.append(client)
        return client

    monkeypatch.setattr(kombu_redis.Channel, "_create_client", counting)
    return made


def test_a_channel_publishes_and_acknowledges_through_one_client(
    redis_service: str, clients_made: list[Any]
) -> None:
    name = f"test-broker-{uuid.uuid4().hex[:8]}"
    queue = Queue(name, Exchange(name), routing_key=name)
    with Connection(redis_service, transport=broker.Transport) as connection:
        channel: Any = connection.default_channel  # kombu's Redis channel
        producer = connection.Producer(channel)
        for number in range(5):
            producer.publish({"n": number}, exchange=queue.exchange, routing_key=name,
                             declare=[queue])  # fmt: skip
        received = []
        for _ in range(5):
            message = queue(channel).get(no_ack=False)
            assert message is not None
            received.append(message.payload["n"])
            message.ack()
        assert received == [0, 1, 2, 3, 4]
        assert len({id(client) for client in clients_made}) == 1
        unacked = channel.client.hlen(channel.unacked_key)

        # A new pool (as a reconnect makes) gets a client of its own, which works.
        channel._disconnect_pools()
        producer.publish({"n": 5}, exchange=queue.exchange, routing_key=name)
        message = queue(channel).get(no_ack=False)
        assert message is not None and message.payload == {"n": 5}
        message.ack()
        assert len({id(client) for client in clients_made}) == 2
        queue(channel).delete()
    assert unacked == 0
