"""The openai backend's request body, parsing and secrecy, against a local HTTP server
whose answers the tests write (with httpx's request and response types, as data)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from simulator.backends import ModelRequest, OpenAIBackend
from simulator.backends.openai_http import chat_completions_url
from simulator.errors import BackendHTTPError, BackendUnavailable, StreamInterrupted
from simulator.types import EVAL_SAMPLING, Message, Sampling

from .conftest import free_port

KEY = "sk-very-secret-key-123"
MESSAGES: tuple[Message, ...] = ({"role": "user", "content": "hi"},)


def sse(*events: object) -> bytes:
    lines = [f"data: {json.dumps(e) if not isinstance(e, str) else e}\n\n" for e in events]
    return "".join(lines).encode()


def delta(**fields: object) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


Handler = Callable[[httpx.Request], httpx.Response]
MakeBackend = Callable[..., Awaitable[OpenAIBackend]]


def answering(handler: Handler) -> web.Application:
    """An app that hands every request to ``handler`` and sends back what it returns."""

    async def answer(request: web.Request) -> web.Response:
        seen = httpx.Request(
            request.method, str(request.url), headers=dict(request.headers),
            content=await request.read(),
        )  # fmt: skip
        reply = handler(seen)
        return web.Response(status=reply.status_code, body=reply.content, headers={
            "Content-Type": reply.headers.get("content-type", "text/event-stream"),
        })  # fmt: skip

    app = web.Application()
    app.router.add_route("*", "/{path:.*}", answer)
    return app


@pytest.fixture
async def mock_backend() -> AsyncIterator[MakeBackend]:
    """``await mock_backend(handler, **options)``: a backend (with the API key) talking
    to a server of its own that answers with ``handler``."""
    opened: list[tuple[TestServer, OpenAIBackend]] = []

    async def make(handler: Handler, **kwargs: Any) -> OpenAIBackend:
        server = TestServer(answering(handler))
        await server.start_server()
        backend = OpenAIBackend(str(server.make_url("/")), "qwen", KEY, backoff=0, **kwargs)
        opened.append((server, backend))
        return backend

    yield make
    for server, backend in opened:
        await backend.aclose()
        await server.close()


async def collect(backend: OpenAIBackend, request: ModelRequest):
    return [c async for c in backend.stream(request)]


async def test_the_body_carries_sampling_and_sglang_extras(mock_backend):
    bodies: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        assert request.headers["authorization"] == f"Bearer {KEY}"
        return httpx.Response(200, content=sse(delta(content="x"), "[DONE]"))

    request = ModelRequest(
        messages=MESSAGES,
        sampling=Sampling(temperature=0.6, top_p=0.9, top_k=20, max_tokens=300, seed=7),
        json_schema={"type": "object"},
        regex="[a-z]+",
        chat_template_kwargs={"enable_thinking": False},
    )
    await collect(await mock_backend(handler), request)
    body = bodies[0]
    assert body["max_tokens"] == 300
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert (body["temperature"], body["top_p"], body["top_k"], body["seed"]) == (0.6, 0.9, 20, 7)
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "observation", "schema": {"type": "object"}},
    }
    assert body["regex"] == "[a-z]+"
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["messages"] == [{"role": "user", "content": "hi"}]


async def test_default_sampling_sends_only_what_eval_py_sends():
    backend = OpenAIBackend("http://model.test/v1/", "qwen")
    body = backend.request_body(ModelRequest(messages=MESSAGES, sampling=EVAL_SAMPLING))
    sent = {
        k: v for k, v in body.items() if k not in ("model", "messages", "stream", "stream_options")
    }
    assert sent == {"max_tokens": 32768, "temperature": 0.6}
    assert backend.base_url == "http://model.test"
    await backend.aclose()


@pytest.mark.parametrize(
    "given", ["http://h:30000", "http://h:30000/", "http://h:30000/v1", "http://h:30000/v1/"]
)
def test_the_model_url_works_with_or_without_v1(given):
    assert chat_completions_url(given) == "http://h:30000/v1/chat/completions"


async def test_without_sglang_extras_the_non_standard_fields_are_left_out():
    backend = OpenAIBackend("http://model.test", "gpt", sglang_extras=False)
    body = backend.request_body(
        ModelRequest(messages=MESSAGES, regex="x", chat_template_kwargs={"a": 1}, model="other")
    )
    assert "top_k" not in body and "regex" not in body and "chat_template_kwargs" not in body
    assert "seed" not in body
    assert body["model"] == "other"
    await backend.aclose()


async def test_reasoning_content_usage_and_finish_reason_are_parsed(mock_backend):
    usage = {
        "prompt_tokens": 50,
        "completion_tokens": 9,
        "completion_tokens_details": {"reasoning_tokens": 4},
        "prompt_tokens_details": {"cached_tokens": 32},
    }

    def handler(request: httpx.Request) -> httpx.Response:
        events = [
            delta(role="assistant", content=""),
            delta(reasoning_content="think"),
            delta(content="<predicted_observation>ok"),
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
            {"choices": [], "usage": usage},
            "[DONE]",
        ]
        return httpx.Response(200, content=sse(*events))

    chunks = await collect(await mock_backend(handler), ModelRequest(messages=MESSAGES))
    assert [(c.kind, c.text) for c in chunks[:2]] == [
        ("reasoning", "think"),
        ("content", "<predicted_observation>ok"),
    ]
    assert chunks[2].usage is not None
    assert (chunks[2].usage.reasoning_tokens, chunks[2].usage.cached_tokens) == (4, 32)
    assert chunks[3].finish_reason == "length"


async def test_an_error_event_after_tokens_interrupts_the_stream(mock_backend):
    def handler(request: httpx.Request) -> httpx.Response:
        events = [delta(content="a"), {"error": {"message": "out of memory"}}]
        return httpx.Response(200, content=sse(*events))

    with pytest.raises(StreamInterrupted):
        backend = await mock_backend(handler, max_retries=0)
        await collect(backend, ModelRequest(messages=MESSAGES))


async def test_a_stream_broken_before_any_token_is_retried(mock_backend):
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(200, content=sse(delta(role="assistant", content="")))
        return httpx.Response(200, content=sse(delta(content="fine"), "[DONE]"))

    backend = await mock_backend(handler, max_retries=1)
    chunks = await collect(backend, ModelRequest(messages=MESSAGES))
    assert chunks[0].text == "fine"
    assert len(calls) == 2


async def test_the_api_key_never_reaches_errors_logs_or_repr(caplog, mock_backend):
    def handler(request: httpx.Request) -> httpx.Response:
        echoed = request.headers["authorization"]
        return httpx.Response(503, json={"error": {"message": f"bad header {echoed}"}})

    backend = await mock_backend(handler, max_retries=1)
    with caplog.at_level(logging.DEBUG), pytest.raises(BackendHTTPError) as caught:
        await collect(backend, ModelRequest(messages=MESSAGES))
    assert caught.value.status == 503
    assert KEY not in str(caught.value)
    assert "retrying" in caplog.text
    assert KEY not in caplog.text
    assert KEY not in repr(backend)


async def test_health_falls_back_to_models_when_there_is_no_health_route(mock_backend):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "qwen"}]})
        return httpx.Response(404)

    backend = await mock_backend(handler)
    health = await backend.health()
    info = await backend.info()
    assert health.ok and "/v1/models" in health.detail
    assert info["models"] == ["qwen"]


async def test_health_reports_an_unreachable_server_without_raising():
    backend = OpenAIBackend(f"http://127.0.0.1:{free_port()}", "qwen", KEY)
    health = await backend.health()
    assert not health.ok and "unreachable" in health.detail
    with pytest.raises(BackendUnavailable):
        await backend.info()
    await backend.aclose()


async def test_cached_tokens_grow_when_a_request_extends_the_previous_one(server):
    backend = OpenAIBackend(server.base_url, "m")
    first = ModelRequest(messages=({"role": "system", "content": "S" * 40}, *MESSAGES))
    second_messages: tuple[Message, ...] = (
        *first.messages,
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "more"},
    )
    await collect(backend, first)
    chunks = await collect(backend, ModelRequest(messages=second_messages))
    usage = chunks[-2].usage
    assert usage is not None and usage.cached_tokens is not None
    assert 0 < usage.cached_tokens < usage.prompt_tokens
    await backend.aclose()


async def test_reasoning_streams_before_the_observation(reasoning_server):
    backend = OpenAIBackend(reasoning_server.base_url, "m")
    chunks = await collect(backend, ModelRequest(messages=MESSAGES))
    reasoning = "".join(c.text for c in chunks if c.kind == "reasoning")
    content = "".join(c.text for c in chunks if c.kind == "content")
    kinds = [c.kind for c in chunks if c.kind in {"reasoning", "content"}]
    assert reasoning.startswith("The agent acted at turn 1")
    assert content == "<predicted_observation>$ hi\n(simulated) ok\n$ </predicted_observation>"
    assert kinds == sorted(kinds, key=lambda kind: kind != "reasoning")
    assert chunks[-2].usage is not None
    assert chunks[-2].usage.reasoning_tokens == kinds.count("reasoning")
    await backend.aclose()


async def test_a_character_split_between_two_reads_arrives_whole():
    event = json.dumps(delta(content="naïve ✓"), ensure_ascii=False)
    body = f"data: {event}\n\ndata: [DONE]\n\n".encode()
    cut = body.index("✓".encode()) + 1  # inside the character's three bytes

    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(body[:cut])
        await asyncio.sleep(0.05)  # two reads on the client, not one
        await response.write(body[cut:])
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    server = TestServer(app)
    await server.start_server()
    backend = OpenAIBackend(str(server.make_url("/")), "qwen")
    try:
        chunks = await collect(backend, ModelRequest(messages=MESSAGES))
    finally:
        await backend.aclose()
        await server.close()
    assert "".join(c.text for c in chunks if c.kind == "content") == "naïve ✓"
