"""Small value types shared by prompts, backends and the engine."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, TypedDict

Role = Literal["system", "user", "assistant"]

#: How a request lays out an episode (see :mod:`simulator.prompting`): ``agentworld``
#: is AgentWorldBench's turn text, the layout Qwen-AgentWorld was trained and
#: measured in; ``plain`` sends bare actions and observations, for other models;
#: ``edit`` hands a small demo model the previous observation to edit (the embedded
#: model's layout, never offered for an endpoint, so not in :data:`PROMPT_LAYOUTS`).
PromptLayout = Literal["agentworld", "plain", "edit"]
PROMPT_LAYOUTS: tuple[PromptLayout, ...] = ("agentworld", "plain")


class Message(TypedDict):
    """One chat message as OpenAI-compatible servers take it."""

    role: Role
    content: str


@dataclass(frozen=True)
class Sampling:
    """Sampling settings: what eval.py sends, and room for a reasoning model.

    Qwen-AgentWorld reasons for thousands of tokens before it answers (a median
    of ~4,300 completion tokens per terminal step, up to ~11,000), so a live step
    may use 16,384; AgentWorldBench's eval.py sends 32,768 (:data:`EVAL_SAMPLING`).
    ``max_tokens`` is always sent because SGLang's own default is only 128.
    ``top_p``, ``top_k`` and ``seed`` are sent only when set: eval.py sends
    neither, and SGLang then applies the model's own generation config.
    """

    temperature: float = 0.6
    top_p: float | None = None
    top_k: int | None = None
    max_tokens: int = 16384
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


#: Exactly what AgentWorldBench's eval.py sends for inference and judging.
EVAL_SAMPLING = Sampling(temperature=0.6, max_tokens=32768)
