"""A small OpenAI-compatible server (a hand-written ASGI app) for tests and demos.

It speaks the same HTTP streaming protocol as SGLang: ``/v1/chat/completions``
(SSE chunks with ``choices[0].delta.{role,content,reasoning_content}``, a usage
chunk when ``stream_options.include_usage`` is set, ``data: [DONE]``; or one JSON
answer), ``/v1/models``, ``/health`` and ``/get_model_info``. Faults are injected
per request (see :mod:`simulator.serve.faults`) or at random (``fail_rate``).

A "token" here is ``token_chars`` characters. ``cached_tokens`` imitates SGLang's
radix cache: the tokens of the longest message prefix an earlier request sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulator.backends._text import count_user_turns, split_text, wrap_observation
from simulator.serve.faults import Fault, fault_for
from simulator.serve.replies import scripted_observation, scripted_reasoning
from simulator.types import Message

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_PREFIX_CACHE_LIMIT = 100_000
_RECORDED_LIMIT = 10_000


@dataclass(frozen=True)
class ServerOptions:
    """How the server answers; the command line maps onto these one to one."""

    replay: Sequence[str] | None = None
    latency_ms: float = 0.0
    tokens_per_s: float | None = None
    reasoning: bool = False
    fail_rate: float = 0.0
    seed: int | None = None
    model: str = "world-studio-test"
    token_chars: int = 4


@dataclass
class ServerState:
    """What the server saw, for tests: chat requests per model name, closed streams.

    ``requests`` keeps the decoded body of each chat request (the latest
    ``_RECORDED_LIMIT``), so a test can assert on exactly what a client sent.
    """

    hits: Counter[str] = field(default_factory=Counter)
    requests: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=_RECORDED_LIMIT))
    completed: int = 0
    disconnects: int = 0
    fault_seen: Counter[str] = field(default_factory=Counter)
    prefix_tokens: dict[str, int] = field(default_factory=dict)


class _DropConnection(Exception):
    """Raised inside the app to make the ASGI server cut the connection mid-stream."""


class ChatServer:
    """The ASGI application; one instance per server, its ``state`` shared with tests."""

    def __init__(self, options: ServerOptions | None = None) -> None:
        self.options = options or ServerOptions()
        self.state = ServerState()
        self._random = random.Random(self.options.seed)
        self._ids = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        route = (scope["method"], scope["path"])
        if route == ("GET", "/health"):
            await _respond(send, 200, b"", "text/plain")
        elif route == ("GET", "/v1/models"):
            model = {"id": self.options.model, "object": "model", "owned_by": "world-studio"}
            await _json(send, 200, {"object": "list", "data": [model]})
        elif route == ("GET", "/get_model_info"):
            info = {"model_path": self.options.model, "is_generation": True}
            await _json(send, 200, info)
        elif route == ("POST", "/v1/chat/completions"):
            await self._chat(scope, receive, send)
        else:
            await _error(send, 404, f"no route {scope['method']} {scope['path']}")

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            body = json.loads(await _read_body(receive))
            if isinstance(body, dict):
                self.state.requests.append(body)
            messages = _messages(body)
            model = str(body.get("model") or self.options.model)
            headers = dict(scope["headers"])
            self.state.hits[model] += 1
            fault = fault_for(model, _header(headers, b"x-fault"))
        except ValueError as exc:
            await _error(send, 400, str(exc))
            return
        status = self._failure_status(fault)
        if status is not None:
            extra = [(b"retry-after", b"0")] if status == 429 else []
            await _error(send, status, "injected fault", extra)
            return
        try:
            content = self._content(messages)
        except LookupError as exc:
            await _error(send, 400, str(exc))
            return
        reasoning = scripted_reasoning(messages) if self.options.reasoning else ""
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        answer = _Answer(self, model, messages, content, reasoning, max_tokens)
        disconnected = asyncio.Event()
        watcher = asyncio.create_task(_watch_disconnect(receive, disconnected))
        try:
            if body.get("stream"):
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                await self._stream(send, answer, fault, include_usage, disconnected)
            else:
                await self._whole(send, answer, fault, disconnected)
        finally:
            watcher.cancel()

    def _failure_status(self, fault: Fault | None) -> int | None:
        if self.options.fail_rate and self._random.random() < self.options.fail_rate:
            return 500
        if fault is None or fault.status is None:
            return None
        self.state.fault_seen[fault.spec] += 1
        if fault.once and self.state.fault_seen[fault.spec] > 1:
            return None
        return fault.status

    def _content(self, messages: list[Message]) -> str:
        if self.options.replay is None:
            return scripted_observation(messages)
        turn = count_user_turns(messages)
        if not 1 <= turn <= len(self.options.replay):
            raise LookupError(f"the replay has no observation for turn {turn}")
        return wrap_observation(self.options.replay[turn - 1])

    async def _stream(
        self,
        send: Send,
        answer: _Answer,
        fault: Fault | None,
        include_usage: bool,
        disconnected: asyncio.Event,
    ) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if self.options.latency_ms:
            await asyncio.sleep(self.options.latency_ms / 1000)
        if fault is not None and fault.kind == "stall":
            await self._misbehave(fault, disconnected)
        delay = 1 / self.options.tokens_per_s if self.options.tokens_per_s else 0.0
        midway = fault is not None and fault.kind in {"disconnect-after", "stall-after"}
        if not disconnected.is_set():
            await _event(send, answer.chunk({"role": "assistant", "content": ""}))
        for sent, (kind, piece) in enumerate(answer.pieces):
            if midway and fault is not None and sent == fault.count:
                await self._misbehave(fault, disconnected)
            if delay:
                await asyncio.sleep(delay)
            if disconnected.is_set():
                break
            field_name = "reasoning_content" if kind == "reasoning" else "content"
            await _event(send, answer.chunk({field_name: piece}))
        if disconnected.is_set():
            self.state.disconnects += 1
            return
        await _event(send, answer.chunk({}, answer.finish_reason))
        if include_usage:
            await _event(send, answer.chunk(None, usage=answer.usage()))
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})
        self.state.completed += 1

    async def _misbehave(self, fault: Fault, disconnected: asyncio.Event) -> None:
        if fault.kind == "disconnect-after":
            raise _DropConnection(fault.spec)
        if fault.kind in {"stall", "stall-after"}:
            await disconnected.wait()

    async def _whole(
        self, send: Send, answer: _Answer, fault: Fault | None, disconnected: asyncio.Event
    ) -> None:
        if self.options.latency_ms:
            await asyncio.sleep(self.options.latency_ms / 1000)
        if fault is not None and fault.status is None:
            await self._misbehave(fault, disconnected)
            self.state.disconnects += 1
            return
        message: dict[str, Any] = {"role": "assistant", "content": answer.text("content")}
        if answer.text("reasoning"):
            message["reasoning_content"] = answer.text("reasoning")
        choice = {"index": 0, "message": message, "finish_reason": answer.finish_reason}
        await _json(
            send,
            200,
            {**answer.envelope("chat.completion"), "choices": [choice], "usage": answer.usage()},
        )
        self.state.completed += 1

    def next_id(self) -> str:
        self._ids += 1
        return f"chatcmpl-{self._ids}"

    def cached_tokens(self, messages: list[Message]) -> tuple[int, int]:
        """(prompt tokens, tokens of the longest prefix an earlier request sent); remembers this one."""
        tokens = 0
        cached = 0
        digest = hashlib.sha256()
        cache = self.state.prefix_tokens
        if len(cache) > _PREFIX_CACHE_LIMIT:
            cache.clear()
        for message in messages:
            digest.update(json.dumps(message, sort_keys=True).encode())
            tokens += -(-len(message["content"]) // self.options.token_chars) + 4
            key = digest.hexdigest()
            if key in cache:
                cached = tokens
            cache[key] = tokens
        return tokens, cached


class _Answer:
    """One request's answer: its token pieces, finish reason and usage."""

    def __init__(
        self,
        server: ChatServer,
        model: str,
        messages: list[Message],
        content: str,
        reasoning: str,
        max_tokens: Any,
    ) -> None:
        size = server.options.token_chars
        pieces = [("reasoning", p) for p in split_text(reasoning, size)]
        pieces += [("content", p) for p in split_text(content, size)]
        limit = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else len(pieces)
        self.pieces = pieces[:limit]
        self.finish_reason = "length" if len(pieces) > limit else "stop"
        self.model = model
        self.id = server.next_id()
        self.created = int(time.time())
        self.prompt_tokens, self.cached = server.cached_tokens(messages)

    def text(self, kind: str) -> str:
        return "".join(piece for k, piece in self.pieces if k == kind)

    def envelope(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}

    def chunk(
        self, delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None
    ) -> dict[str, Any]:
        event = self.envelope("chat.completion.chunk")
        if delta is None:
            return {**event, "choices": [], "usage": usage}
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**event, "choices": [choice], "usage": None}

    def usage(self) -> dict[str, Any]:
        completion = len(self.pieces)
        reasoning = sum(1 for kind, _ in self.pieces if kind == "reasoning")
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": self.prompt_tokens + completion,
            "prompt_tokens_details": {"cached_tokens": self.cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        }


def _messages(body: Any) -> list[Message]:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages: required non-empty list")
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in {
            "system",
            "user",
            "assistant",
        }:
            raise ValueError("messages: each needs a role of system, user or assistant")
        if not isinstance(message.get("content"), str):
            raise ValueError("messages: each needs text content")
    return messages


def _header(headers: dict[bytes, bytes], name: bytes) -> str | None:
    value = headers.get(name)
    return value.decode("latin-1") if value is not None else None


async def _read_body(receive: Receive) -> bytes:
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(parts)


async def _watch_disconnect(receive: Receive, disconnected: asyncio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    disconnected.set()


async def _event(send: Send, data: dict[str, Any]) -> None:
    payload = b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"
    await send({"type": "http.response.body", "body": payload, "more_body": True})


async def _respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: str,
    extra: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    headers = [(b"content-type", content_type.encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _json(
    send: Send, status: int, data: Any, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    await _respond(send, status, json.dumps(data).encode(), "application/json", extra)


async def _error(
    send: Send, status: int, message: str, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    error = {"object": "error", "message": message, "type": "error", "code": status}
    await _json(send, status, {"error": error}, extra)
