"""Test doubles shared by the engine, perturbation and format tests.

``FakeBackend`` implements the backend protocol from a script of answers;
``EchoDomain`` is a minimal domain registered as ``"fake"``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, ClassVar

from simulator.backends.base import Backend, Chunk, Health, ModelRequest
from simulator.domains import register
from simulator.domains.base import Action, Domain
from simulator.errors import InvalidAction
from simulator.types import Usage
from simulator.world import World


class EchoDomain(Domain):
    name: ClassVar[str] = "fake"
    title: ClassVar[str] = "Fake"
    observation_formats: ClassVar[tuple[str, ...]] = ("text",)
    renderer: ClassVar[str] = "text"

    def system_prompt(self, world: World) -> str:
        return f"You simulate {world.title}.\n{world.premise}"

    def parse_action(self, raw: str, world: World) -> Action:
        if not raw.strip():
            raise InvalidAction("empty action")
        return Action(raw=raw, kind="text")

    def detect_format(self, observation: str) -> str | None:
        return "text"


register(EchoDomain())


def make_world(domain: str = "fake", **kwargs: Any) -> World:
    return World(domain=domain, title=kwargs.pop("title", "Test world"), **kwargs)


Script = Callable[[ModelRequest], Sequence[Chunk]]


def answer(observation: str, reasoning: str = "", *, tagged: bool = True) -> list[Chunk]:
    """The chunks of a well-formed answer, content split into small pieces."""
    text = (
        f"<predicted_observation>{observation}</predicted_observation>" if tagged else observation
    )
    chunks = [Chunk("reasoning", reasoning)] if reasoning else []
    chunks += [Chunk("content", text[i : i + 7]) for i in range(0, len(text), 7)]
    chunks.append(Chunk("usage", usage=Usage(prompt_tokens=10, completion_tokens=5)))
    chunks.append(Chunk("finish", finish_reason="stop"))
    return chunks


class FakeBackend(Backend):
    """Answers each request with the next scripted answer (or a function of it)."""

    name = "fake"

    def __init__(self, script: Script | Sequence[Sequence[Chunk]] | None = None) -> None:
        self.requests: list[ModelRequest] = []
        self.closed_streams = 0
        self._script = script
        self._answers = iter(script) if isinstance(script, Sequence) else None

    def _chunks(self, request: ModelRequest) -> Sequence[Chunk]:
        if self._answers is not None:
            return next(self._answers)
        if callable(self._script):
            return self._script(request)
        return answer(f"observation {len(self.requests)}")

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        try:
            for chunk in self._chunks(request):
                yield chunk
        finally:
            self.closed_streams += 1

    async def health(self) -> Health:
        return Health(ok=True, detail="fake")

    async def info(self) -> dict[str, Any]:
        return {"name": self.name}

    async def aclose(self) -> None:
        return None
