"""Small value types shared by prompts, backends and the engine."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, TypedDict

Role = Literal["system", "user", "assistant"]


class Message(TypedDict):
    """One chat message as OpenAI-compatible servers take it."""

    role: Role
    content: str


@dataclass(frozen=True)
class Sampling:
    """Sampling settings; defaults follow the Qwen-AgentWorld model card.

    ``max_tokens`` is always sent because SGLang's own default is only 128.
    """

    temperature: float = 0.6
    top_p: float = 0.95
    top_k: int = 20
    max_tokens: int = 2048
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sampling:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


@dataclass(frozen=True)
class Usage:
    """Token counts for one model call; ``cached_tokens`` is None when not reported."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int | None = None
