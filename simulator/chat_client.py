"""Plain (non-streaming) chat completions, sent as AgentWorldBench's ``eval.py`` sends them.

``eval.py`` calls ``client.chat.completions.create(model=..., messages=...,
max_tokens=..., temperature=...)`` with the OpenAI SDK for both inference and
judging, so the request body holds exactly those four fields: no ``stream``, no
``top_p``/``top_k`` (the server then applies the model's own generation config).
The SDK retries a failed call twice on its own (connection errors, 408, 409, 429
and 5xx, with a short exponential backoff) before ``eval.py`` sees an error;
:class:`ChatClient` does the same so a transient server hiccup does not turn a
row into an empty generation here when it would not have under ``eval.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import httpx

from simulator.backends.openai_http import server_root
from simulator.http_transport import AiohttpTransport
from simulator.types import Message, Sampling

#: The OpenAI SDK's default number of automatic retries.
SDK_RETRIES = 2
_RETRIED_STATUSES = frozenset({408, 409, 429})


def _retryable(error: Exception) -> bool:
    if isinstance(error, httpx.TransportError):
        return True
    if isinstance(error, httpx.HTTPStatusError):
        status = error.response.status_code
        return status in _RETRIED_STATUSES or status >= 500
    return False


class ChatClient:
    """One ``POST /v1/chat/completions`` per call, returning the message's content text.

    One JSON answer per row costs far less CPU than a token stream, which is what
    bounds ``awb infer`` at high concurrency. ``base_url`` may end in ``/v1``
    (eval.py's spelling) or not.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 600.0,
        max_retries: int = SDK_RETRIES,
        backoff_s: float = 0.5,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._client = httpx.AsyncClient(
            base_url=server_root(base_url),
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=10.0),
            transport=AiohttpTransport(max_connections=256),
        )

    def body(self, messages: Sequence[Message], sampling: Sampling) -> dict[str, object]:
        """The request body: eval.py's four fields and nothing else."""
        return {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
        }

    async def complete(self, messages: Sequence[Message], sampling: Sampling) -> str:
        """The answer's content text (``""`` when the server sent none); raises httpx errors."""
        body = self.body(messages, sampling)
        attempt = 0
        while True:
            try:
                response = await self._client.post("/v1/chat/completions", json=body)
                response.raise_for_status()
                break
            except httpx.HTTPError as exc:
                if attempt >= self.max_retries or not _retryable(exc):
                    raise
                await asyncio.sleep(min(self.backoff_s * 2**attempt, 8.0))
                attempt += 1
        return str(response.json()["choices"][0]["message"].get("content") or "")

    async def aclose(self) -> None:
        await self._client.aclose()
