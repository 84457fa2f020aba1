"""The stream buffer in Redis, as production keeps it (studio/lib/stream_buffer.py)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import redis

from studio.lib import stream_buffer


def test_appends_accumulate_with_their_sequence_number_and_expire(
    redis_service: str, settings: Any
) -> None:
    settings.REDIS_URL = f"{redis_service}/15"
    step_id = int(uuid.uuid4().int % 10**9)

    async def stream() -> None:
        await stream_buffer.append(step_id, 1, "think ", "$ ls\n")
        await stream_buffer.append(step_id, 2, "more", "naïve ✓")

    asyncio.run(stream())
    assert stream_buffer.read(step_id) == stream_buffer.Snapshot(2, "think more", "$ ls\nnaïve ✓")
    client = redis.Redis.from_url(settings.REDIS_URL)
    ttls = [int(client.ttl(key)) for key in stream_buffer._keys(step_id)]  # type: ignore[arg-type]
    assert all(0 < ttl <= stream_buffer.TTL_S for ttl in ttls), ttls

    asyncio.run(stream_buffer.discard(step_id))
    assert stream_buffer.read(step_id) is None
    assert client.exists(*stream_buffer._keys(step_id)) == 0
