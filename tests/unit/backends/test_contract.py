"""One contract every backend keeps, run unchanged against each of them."""

from __future__ import annotations

import asyncio

import pytest

from simulator.backends import (
    Backend,
    Chunk,
    LocalBackend,
    ModelRequest,
    OpenAIBackend,
    ReplayBackend,
    ScriptedBackend,
)
from simulator.types import Message, Sampling

MESSAGES: tuple[Message, ...] = (
    {"role": "system", "content": "You simulate a Linux terminal."},
    {"role": "user", "content": "**Action:**\npwd"},
    {"role": "assistant", "content": "<predicted_observation>/app</predicted_observation>"},
    {"role": "user", "content": "**Action:**\nls"},
)
REQUEST = ModelRequest(messages=MESSAGES, sampling=Sampling(temperature=0, max_tokens=16))
LONG_REQUEST = ModelRequest(messages=MESSAGES, sampling=Sampling(temperature=0, max_tokens=64))


@pytest.fixture(
    params=["openai", "replay", "scripted", pytest.param("local", marks=pytest.mark.slow)]
)
async def backend(request):
    if request.param == "openai":
        server = request.getfixturevalue("reasoning_server")
        made: Backend = OpenAIBackend(server.base_url, "test-model", max_retries=0)
    elif request.param == "replay":
        made = ReplayBackend(["/app", "README.md  src  tests"], reasoning=["", "ls lists files."])
    elif request.param == "scripted":
        made = ScriptedBackend(
            ["<predicted_observation>README.md</predicted_observation>"], reasoning=["Think."]
        )
    else:
        model_path, cache_dir = request.getfixturevalue("local_model")
        made = LocalBackend(model_path, cache_dir=cache_dir)
    yield made
    await made.aclose()


async def collect(backend: Backend, request: ModelRequest = REQUEST) -> list[Chunk]:
    return [chunk async for chunk in backend.stream(request)]


def test_it_implements_the_backend_protocol(backend):
    assert isinstance(backend, Backend)
    assert isinstance(backend.name, str) and backend.name


async def test_stream_ends_with_exactly_one_usage_then_finish(backend):
    chunks = await collect(backend)
    kinds = [c.kind for c in chunks]
    assert kinds[-2:] == ["usage", "finish"]
    assert kinds.count("usage") == 1
    assert kinds.count("finish") == 1
    assert chunks[-1].finish_reason in {"stop", "length"}
    assert chunks[-2].usage is not None


async def test_text_chunks_are_non_empty_and_reasoning_comes_first(backend):
    chunks = await collect(backend)
    text_kinds = [c.kind for c in chunks if c.kind in {"reasoning", "content"}]
    assert "content" in text_kinds
    assert all(c.text for c in chunks if c.kind in {"reasoning", "content"})
    first_content = text_kinds.index("content")
    assert "reasoning" not in text_kinds[first_content:]


async def test_usage_counts_the_completion(backend):
    chunks = await collect(backend)
    usage = chunks[-2].usage
    assert usage is not None
    assert 0 < usage.completion_tokens <= REQUEST.sampling.max_tokens
    assert usage.reasoning_tokens <= usage.completion_tokens


async def test_max_tokens_bounds_the_answer(backend):
    short = ModelRequest(messages=MESSAGES, sampling=Sampling(temperature=0, max_tokens=2))
    chunks = await collect(backend, short)
    usage = chunks[-2].usage
    assert usage is not None and usage.completion_tokens <= 2
    assert chunks[-1].finish_reason == "length"


async def test_closing_mid_stream_leaves_the_backend_usable(backend):
    stream = backend.stream(LONG_REQUEST)
    first = await anext(stream)
    await stream.aclose()
    assert first.kind in {"reasoning", "content"}
    chunks = await collect(backend)
    assert chunks[-1].kind == "finish"


async def test_cancelling_the_consumer_leaves_the_backend_usable(backend):
    started = asyncio.Event()

    async def consume() -> None:
        async for _ in backend.stream(LONG_REQUEST):
            started.set()
            await asyncio.sleep(3600)

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    chunks = await collect(backend)
    assert chunks[-1].kind == "finish"


async def test_concurrent_streams_both_finish(backend):
    first, second = await asyncio.gather(collect(backend), collect(backend))
    assert first[-1].kind == "finish"
    assert second[-1].kind == "finish"


async def test_health_is_ok_and_info_names_the_backend(backend):
    health = await backend.health()
    info = await backend.info()
    assert health.ok, health.detail
    assert info["backend"] in {"openai", "local", "replay", "scripted"}
    assert info["model"]
