"""Text helpers shared by the backends that stream canned text (replay, scripted, test server)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable

from simulator.backends.base import Chunk, ChunkKind
from simulator.types import Message, Usage


def split_text(text: str, size: int) -> list[str]:
    """Cut ``text`` into pieces of at most ``size`` characters; joined, they give ``text`` back."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return [text[i : i + size] for i in range(0, len(text), size)]


def wrap_observation(observation: str) -> str:
    """Wrap an observation the way Qwen-AgentWorld answers, so the same parser reads it."""
    return f"<predicted_observation>{observation}</predicted_observation>"


def count_user_turns(messages: Iterable[Message]) -> int:
    """How many user messages a request holds: the turn number the request is for."""
    return sum(1 for m in messages if m["role"] == "user")


async def stream_canned(
    content: str,
    *,
    reasoning: str = "",
    chunk_size: int,
    latency_s: float = 0.0,
    tokens_per_s: float | None = None,
    max_tokens: int | None = None,
) -> AsyncIterator[Chunk]:
    """Stream fixed text as a model would: reasoning, content, usage, then finish.

    Each piece of ``chunk_size`` characters counts as one token, so ``max_tokens``
    truncates the way a real model does (``finish_reason="length"``).
    """
    if latency_s > 0:
        await asyncio.sleep(latency_s)
    delay = 1.0 / tokens_per_s if tokens_per_s else 0.0
    pieces: list[tuple[ChunkKind, str]] = [
        ("reasoning", p) for p in split_text(reasoning, chunk_size)
    ] + [("content", p) for p in split_text(content, chunk_size)]
    truncated = max_tokens is not None and len(pieces) > max_tokens
    if max_tokens is not None:
        pieces = pieces[:max_tokens]
    for kind, piece in pieces:
        if delay:
            await asyncio.sleep(delay)
        yield Chunk(kind, text=piece)
    reasoning_tokens = sum(1 for kind, _ in pieces if kind == "reasoning")
    yield Chunk(
        "usage", usage=Usage(completion_tokens=len(pieces), reasoning_tokens=reasoning_tokens)
    )
    yield Chunk("finish", finish_reason="length" if truncated else "stop")
