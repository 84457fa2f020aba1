"""The openai backend against the protocol test server's injected faults, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.backends import ModelRequest, OpenAIBackend
from simulator.errors import (
    BackendHTTPError,
    BackendRateLimited,
    BackendTimeout,
    BackendUnavailable,
    StreamInterrupted,
)
from simulator.serve import ServerOptions, start_server_in_thread
from simulator.types import Sampling

from .conftest import free_port, wait_until

REQUEST = ModelRequest(
    messages=({"role": "user", "content": "**Action:**\necho hello world"},),
    sampling=Sampling(max_tokens=64),
)


async def drain(backend: OpenAIBackend, received: list[str] | None = None) -> str:
    received = [] if received is None else received
    async for chunk in backend.stream(REQUEST):
        if chunk.kind == "content":
            received.append(chunk.text)
    return "".join(received)


async def test_refused_connection_raises_unavailable_after_retries():
    backend = OpenAIBackend(f"http://127.0.0.1:{free_port()}", "m", max_retries=2, backoff=0)
    with pytest.raises(BackendUnavailable):
        await drain(backend)
    await backend.aclose()


async def test_a_500_then_success_is_retried_and_succeeds(fresh_server):
    backend = OpenAIBackend(fresh_server.base_url, "fault:500-once", max_retries=2, backoff=0)
    text = await drain(backend)
    assert "echo hello world" in text
    assert fresh_server.state.hits["fault:500-once"] == 2
    await backend.aclose()


async def test_429_raises_rate_limited_once_retries_are_spent(fresh_server):
    backend = OpenAIBackend(fresh_server.base_url, "fault:429", max_retries=2, backoff=0)
    with pytest.raises(BackendRateLimited) as caught:
        await drain(backend)
    assert caught.value.status == 429
    assert fresh_server.state.hits["fault:429"] == 3  # the first try and two retries
    await backend.aclose()


async def test_a_400_is_not_retried(fresh_server):
    backend = OpenAIBackend(fresh_server.base_url, "fault:nonsense", max_retries=3, backoff=0)
    with pytest.raises(BackendHTTPError) as caught:
        await drain(backend)
    assert caught.value.status == 400
    assert fresh_server.state.hits["fault:nonsense"] == 1
    await backend.aclose()


async def test_a_mid_stream_disconnect_is_interrupted_and_not_retried(fresh_server):
    backend = OpenAIBackend(
        fresh_server.base_url, "fault:disconnect-after:5", max_retries=3, backoff=0
    )
    received: list[str] = []
    with pytest.raises(StreamInterrupted):
        await drain(backend, received)
    assert len(received) == 5
    assert fresh_server.state.hits["fault:disconnect-after:5"] == 1
    await backend.aclose()


async def test_a_stalled_server_raises_timeout(fresh_server):
    backend = OpenAIBackend(
        fresh_server.base_url, "fault:stall", timeout=0.2, max_retries=3, backoff=0
    )
    with pytest.raises(BackendTimeout):
        await drain(backend)
    assert fresh_server.state.hits["fault:stall"] == 1
    await backend.aclose()


async def test_a_stall_after_tokens_raises_timeout_with_the_tokens_delivered(fresh_server):
    backend = OpenAIBackend(fresh_server.base_url, "fault:stall-after:2", timeout=0.2, backoff=0)
    received: list[str] = []
    with pytest.raises(BackendTimeout):
        await drain(backend, received)
    assert len(received) == 2
    await backend.aclose()


async def test_closing_the_stream_closes_the_connection_server_side(fresh_server):
    backend = OpenAIBackend(fresh_server.base_url, "fault:stall-after:3")
    stream: Any = backend.stream(REQUEST)  # an async generator
    texts = [(await anext(stream)).text for _ in range(3)]
    await stream.aclose()
    assert all(texts)
    assert await wait_until(lambda: fresh_server.state.disconnects == 1)
    assert fresh_server.state.completed == 0
    await backend.aclose()


async def test_random_failures_from_fail_rate_surface_as_http_errors():
    with start_server_in_thread(ServerOptions(fail_rate=1.0, seed=1)) as running:
        backend = OpenAIBackend(running.base_url, "m", max_retries=1, backoff=0)
        with pytest.raises(BackendHTTPError) as caught:
            await drain(backend)
        assert caught.value.status == 500
        assert running.state.hits["m"] == 2
        await backend.aclose()
