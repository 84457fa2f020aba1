"""OpenAI-compatible streaming backend: SGLang, vLLM or a hosted API, over aiohttp.

Retries (exponential backoff with jitter) cover connection errors, HTTP 429 and
5xx, and only until the first token: once text reached the caller, a retry would
duplicate it, so a broken stream raises :class:`StreamInterrupted` instead.

``timeout`` is a read timeout: the longest wait for the next bytes, so it bounds
both the time to the first token (prefill of a long history happens before it)
and every gap between tokens. The API key is sent in a header and never appears
in a log line, a repr or an error message.

The backend speaks aiohttp itself, without httpx's request and response objects in
between: in a worker, whose step loop makes every model call of the process, those
layers (building the request, the transport adapter, the line iterator) cost about a
tenth of the worker's CPU per step (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from simulator.backends.base import Chunk, Health, ModelRequest
from simulator.errors import (
    BackendError,
    BackendHTTPError,
    BackendRateLimited,
    BackendTimeout,
    BackendUnavailable,
    StreamInterrupted,
)
from simulator.http_transport import pooled_session
from simulator.types import Usage

logger = logging.getLogger(__name__)

_MAX_BACKOFF_S = 30.0
#: Errors of the connection itself, before any byte of an answer: worth another attempt.
_UNREACHABLE = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)
#: The wait for the next bytes ran past the read timeout.
_TIMED_OUT = (aiohttp.SocketTimeoutError, TimeoutError)


def server_root(url: str) -> str:
    """The server's root URL, whether it was given as ``http://host:30000`` or ``.../v1``.

    SGLang's docs and eval.py's ``--model-base-url`` name the OpenAI base
    (``.../v1``); SGLang's own ``/health`` and ``/get_model_info`` live at the
    root. Accepting both spellings means neither form posts to ``/v1/v1/...``.
    """
    return url.rstrip("/").removesuffix("/v1")


def chat_completions_url(url: str) -> str:
    """The URL a chat request is actually posted to (shown on the status page)."""
    return f"{server_root(url)}/v1/chat/completions"


class OpenAIBackend:
    """Streams ``/v1/chat/completions`` from any OpenAI-compatible server.

    ``sglang_extras`` sends the SGLang/vLLM fields hosted APIs reject: ``top_k``,
    ``regex`` and ``chat_template_kwargs``. The HTTP session (a connection pool of
    ``max_connections``) is made on first use, in the event loop that uses it.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        connect_timeout: float = 5.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        sglang_extras: bool = True,
        max_connections: int = 256,
    ) -> None:
        self.base_url = server_root(base_url)
        self.model = model
        self.name = f"openai:{model}"
        self.max_retries = max_retries
        self.backoff = backoff
        self.sglang_extras = sglang_extras
        self._api_key = api_key
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=connect_timeout, sock_read=timeout
        )
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        key = ", api_key=***" if self._api_key else ""
        return f"OpenAIBackend({self.base_url!r}, {self.model!r}{key})"

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = pooled_session(
                self._max_connections,
                headers=self._headers,
                timeout=self._timeout,
                skip_auto_headers=("User-Agent", "Accept-Encoding"),
            )
        return self._session

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for ``request``; ``max_tokens`` is always set (SGLang's default is 128)."""
        sampling = request.sampling
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": [dict(m) for m in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
        }
        if sampling.top_p is not None:
            body["top_p"] = sampling.top_p
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if request.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "observation", "schema": request.json_schema},
            }
        if self.sglang_extras:
            if sampling.top_k is not None:
                body["top_k"] = sampling.top_k
            if request.regex is not None:
                body["regex"] = request.regex
            if request.chat_template_kwargs is not None:
                body["chat_template_kwargs"] = request.chat_template_kwargs
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        payload = _json_bytes(self.request_body(request))
        attempt = 0
        while True:
            yielded = False
            try:
                response = await self._open(payload)
                try:
                    async for chunk in _parse_stream(response):
                        yielded = True
                        yield chunk
                    return
                finally:
                    # Runs on aclose() and on task cancellation too: closing (not
                    # releasing) drops the connection, so the server stops generating.
                    response.close()
            except _UNREACHABLE as exc:
                error: BackendError = BackendUnavailable(self._describe("unreachable", exc))
            except _TIMED_OUT as exc:
                raise BackendTimeout(self._describe("timed out", exc)) from exc
            except (aiohttp.ClientError, _StreamBroken) as exc:
                if yielded:
                    raise StreamInterrupted(self._describe("stream broke", exc)) from exc
                error = BackendUnavailable(self._describe("stream broke before any token", exc))
            except BackendHTTPError as exc:
                if exc.status != 429 and exc.status < 500:
                    raise
                error = exc
            if attempt >= self.max_retries:
                raise error
            delay = self._delay(attempt, error)
            attempt += 1
            logger.warning(
                "retrying %s in %.2fs (attempt %d of %d): %s",
                self.base_url,
                delay,
                attempt,
                self.max_retries,
                error,
            )
            await asyncio.sleep(delay)

    async def _open(self, payload: bytes) -> aiohttp.ClientResponse:
        response = await self._client().post(
            f"{self.base_url}/v1/chat/completions",
            data=payload,
            headers=_JSON,
            allow_redirects=False,
        )
        if response.status == 200:
            return response
        try:
            text = (await response.read()).decode("utf-8", "replace")[:500]
        finally:
            response.close()
        message = self._scrub(_error_message(text))
        if response.status == 429:
            raise _RateLimited(message, _retry_after(response.headers.get("retry-after")))
        raise BackendHTTPError(response.status, message)

    def _delay(self, attempt: int, error: BackendError) -> float:
        if isinstance(error, _RateLimited) and error.retry_after is not None:
            return min(error.retry_after, _MAX_BACKOFF_S)
        base: float = min(self.backoff * 2**attempt, _MAX_BACKOFF_S)
        return base * (0.5 + random.random() / 2)

    async def _get(self, path: str) -> tuple[int, bytes]:
        async with self._client().get(f"{self.base_url}{path}", allow_redirects=False) as response:
            return response.status, await response.read()

    async def health(self) -> Health:
        """Ask SGLang's ``/health``; servers without it are asked ``/v1/models``."""
        started = time.perf_counter()
        path = "/health"
        try:
            status, _ = await self._get(path)
            if status == 404:
                path = "/v1/models"
                status, _ = await self._get(path)
        except (aiohttp.ClientError, TimeoutError) as exc:
            return Health(ok=False, detail=self._describe("unreachable", exc))
        latency_ms = (time.perf_counter() - started) * 1000
        return Health(ok=status == 200, detail=f"{path} answered {status}", latency_ms=latency_ms)

    async def info(self) -> dict[str, Any]:
        """SGLang's ``/get_model_info`` (model path, generation or not), else ``/v1/models``."""
        base = {"backend": "openai", "model": self.model, "base_url": self.base_url}
        try:
            status, content = await self._get("/get_model_info")
            if status == 200:
                return {**base, **json.loads(content)}
            status, content = await self._get("/v1/models")
            if status != 200:
                raise BackendHTTPError(status, "model info unavailable")
            models = [m.get("id") for m in json.loads(content).get("data", [])]
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise BackendUnavailable(self._describe("model info unavailable", exc)) from exc
        return {**base, "models": models}

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()

    def _describe(self, what: str, exc: BaseException) -> str:
        return self._scrub(f"{self.base_url}: {what} ({type(exc).__name__}: {exc})")

    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text


_JSON = {"Content-Type": "application/json"}


def _json_bytes(body: dict[str, Any]) -> bytes:
    """The body as httpx's ``json=`` encodes it (compact, UTF-8, no NaN), as before."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class _RateLimited(BackendRateLimited):
    """HTTP 429, remembering the server's ``Retry-After`` for the next attempt's delay."""

    def __init__(self, message: str, retry_after: float | None) -> None:
        super().__init__(429, message)
        self.retry_after = retry_after


class _StreamBroken(Exception):
    """The server ended the stream without ``[DONE]`` or sent an error event."""


async def _lines(response: aiohttp.ClientResponse) -> AsyncIterator[str]:
    """The body's lines as they arrive, split on bytes so that a character split between
    two chunks is decoded whole (aiohttp's own readline refuses lines past 128 KiB)."""
    pending = b""
    async for data in response.content.iter_any():
        pending += data
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.rstrip(b"\r").decode("utf-8", "replace")
    if pending:
        yield pending.rstrip(b"\r").decode("utf-8", "replace")


async def _parse_stream(response: aiohttp.ClientResponse) -> AsyncIterator[Chunk]:
    """Turn SSE ``data:`` lines into chunks; always ends with one usage and one finish chunk."""
    usage = Usage()
    finish_reason: str | None = None
    async for line in _lines(response):
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            yield Chunk("usage", usage=usage)
            yield Chunk("finish", finish_reason=finish_reason or "stop")
            return
        try:
            event = json.loads(data)
        except json.JSONDecodeError:
            raise _StreamBroken(f"invalid JSON event: {data[:80]!r}") from None
        if "error" in event:
            raise _StreamBroken(f"error event: {_error_message(json.dumps(event))}")
        if event.get("usage"):
            usage = _usage(event["usage"])
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("reasoning_content"):
                yield Chunk("reasoning", text=delta["reasoning_content"])
            if delta.get("content"):
                yield Chunk("content", text=delta["content"])
            finish_reason = choice.get("finish_reason") or finish_reason
    raise _StreamBroken("stream ended without [DONE]")


def _usage(data: dict[str, Any]) -> Usage:
    completion_details = data.get("completion_tokens_details") or {}
    prompt_details = data.get("prompt_tokens_details") or {}
    return Usage(
        prompt_tokens=int(data.get("prompt_tokens") or 0),
        completion_tokens=int(data.get("completion_tokens") or 0),
        reasoning_tokens=int(completion_details.get("reasoning_tokens") or 0),
        cached_tokens=prompt_details.get("cached_tokens"),
    )


def _error_message(text: str) -> str:
    """The ``message`` of an OpenAI-style error body, else the body itself (shortened)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text[:200]
    error = data.get("error", data) if isinstance(data, dict) else data
    message = error.get("message") if isinstance(error, dict) else None
    return message[:200] if isinstance(message, str) else text[:200]


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
