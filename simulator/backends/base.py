"""The one protocol every world-model backend implements.

A backend turns a :class:`ModelRequest` into an async stream of :class:`Chunk`.
Reasoning and observation text arrive as separate chunk kinds so the studio can
show them apart. Closing the iterator (``aclose()``, or cancelling the task that
iterates it) must stop generation at once: the HTTP stream is closed, the local
model stops producing tokens.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from simulator.types import Message, Sampling, Usage

ChunkKind = Literal["reasoning", "content", "usage", "finish"]


@dataclass(frozen=True)
class ModelRequest:
    """Everything a backend needs for one completion.

    ``json_schema`` and ``regex`` ask for constrained decoding (SGLang); backends
    that cannot constrain ignore them. ``model`` overrides the backend's default.
    """

    messages: tuple[Message, ...]
    sampling: Sampling = field(default_factory=Sampling)
    json_schema: dict[str, Any] | None = None
    regex: str | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    model: str | None = None


@dataclass(frozen=True)
class Chunk:
    """One piece of a streamed answer.

    ``reasoning``/``content`` carry ``text``; ``usage`` carries ``usage``;
    ``finish`` carries ``finish_reason`` and is always the last chunk.
    """

    kind: ChunkKind
    text: str = ""
    usage: Usage | None = None
    finish_reason: str | None = None


@dataclass(frozen=True)
class Health:
    """Whether a backend answers, with a human-readable detail."""

    ok: bool
    detail: str
    latency_ms: float | None = None


@runtime_checkable
class Backend(Protocol):
    """A world model the engine can stream from."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        """Stream the answer; raises :class:`simulator.errors.BackendError` subclasses."""
        ...

    async def health(self) -> Health:
        """Check the backend answers, cheaply and without generating."""
        ...

    async def info(self) -> dict[str, Any]:
        """Describe the backend and its model (name, context length, ...)."""
        ...

    async def aclose(self) -> None:
        """Release connections or threads."""
        ...
