"""The production channel layer takes a Redis restart: the first join, send and new
channel after it work, and groups joined before it keep receiving."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Iterator

import pytest

from studio.lib.pubsub_layer import ReconnectingPubSubChannelLayer
from tests.integration.stack import free_port, wait_until


class PrivateRedis:
    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wait_until(self.answers, 10, f"redis-server on {self.port}")

    def answers(self) -> bool:
        ping = ["redis-cli", "-p", str(self.port), "ping"]
        return subprocess.run(ping, capture_output=True, text=True).stdout.strip() == "PONG"

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(10)
            self.process.kill()
            self.process = None


@pytest.fixture
def redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


def test_after_a_restart_the_first_operations_succeed_and_old_groups_still_receive(
    redis: PrivateRedis,
) -> None:
    async def run() -> list[object]:
        layer = ReconnectingPubSubChannelLayer(
            hosts=[{"address": f"redis://127.0.0.1:{redis.port}"}]
        )
        channel = await layer.new_channel()
        await layer.group_add("before", channel)
        await layer.group_send("before", {"type": "m", "n": 1})
        got = [await asyncio.wait_for(layer.receive(channel), 5)]

        redis.stop()
        redis.start()
        await layer.group_add("after", channel)  # channels_redis alone fails this one
        other = await layer.new_channel()
        await layer.group_add("after", other)
        await layer.group_send("after", {"type": "m", "n": 2})
        await layer.group_send("before", {"type": "m", "n": 3})
        got += [await asyncio.wait_for(layer.receive(channel), 5) for _ in range(2)]
        got.append(await asyncio.wait_for(layer.receive(other), 5))
        await layer.flush()
        return [message["n"] for message in got]

    assert asyncio.run(run()) == [1, 2, 3, 2]
