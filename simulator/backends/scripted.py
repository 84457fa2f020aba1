"""Scripted: a backend that streams given raw outputs, for tests and demos."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from simulator.backends._text import stream_canned
from simulator.backends.base import Chunk, Health, ModelRequest


class ScriptedBackend:
    """Answers call *i* with ``outputs[i]`` (cycling), streamed in small chunks.

    Outputs are raw model text, so a test can feed malformed answers to the parser.
    ``reasoning[i]`` streams first when given. ``tokens_per_s`` and ``latency_s``
    slow it down for demos of streaming. Every request is kept in ``requests`` so a
    test can check what the engine asked.
    """

    name = "scripted"

    def __init__(
        self,
        outputs: Sequence[str],
        *,
        reasoning: Sequence[str] | None = None,
        tokens_per_s: float | None = None,
        latency_s: float = 0,
        chunk_size: int = 8,
    ) -> None:
        if not outputs:
            raise ValueError("outputs must not be empty")
        if reasoning is not None and len(reasoning) != len(outputs):
            raise ValueError("reasoning must have one entry per output")
        self._outputs = list(outputs)
        self._reasoning = list(reasoning) if reasoning is not None else None
        self._tokens_per_s = tokens_per_s
        self._latency_s = latency_s
        self._chunk_size = chunk_size
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        index = len(self.requests) % len(self._outputs)
        self.requests.append(request)
        reasoning = self._reasoning[index] if self._reasoning is not None else ""
        async for chunk in stream_canned(
            self._outputs[index],
            reasoning=reasoning,
            chunk_size=self._chunk_size,
            latency_s=self._latency_s,
            tokens_per_s=self._tokens_per_s,
            max_tokens=request.sampling.max_tokens,
        ):
            yield chunk

    async def health(self) -> Health:
        return Health(ok=True, detail="scripted needs no server", latency_ms=0.0)

    async def info(self) -> dict[str, Any]:
        return {"backend": "scripted", "model": "scripted", "outputs": len(self._outputs)}

    async def aclose(self) -> None:
        return None
