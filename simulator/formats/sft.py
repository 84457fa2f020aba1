"""Chat SFT JSONL: ``{"messages": [...]}`` per line, for fine-tuning a world model.

An episode becomes one conversation: the system prompt, then user(action) /
assistant(observation) per step, which is exactly the history the engine sends
(so a model trained on it sees what it will be asked at inference). The world
model's reasoning, when kept, goes into a separate ``reasoning`` list (one entry
per assistant message) rather than into the messages, so trainers choose
whether to learn it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from simulator.episode import StepResult
from simulator.errors import FormatError
from simulator.formats._jsonl import dumps, iter_records, write_lines
from simulator.types import Message

_ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class SftRecord:
    """One conversation; ``reasoning`` is None when not kept."""

    messages: tuple[Message, ...]
    reasoning: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"messages": [dict(m) for m in self.messages]}
        if self.reasoning is not None:
            data["reasoning"] = list(self.reasoning)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> SftRecord:
        if not isinstance(data, Mapping) or not isinstance(data.get("messages"), list):
            raise FormatError("needs a 'messages' list", field="messages")
        messages: list[Message] = []
        for i, m in enumerate(data["messages"]):
            if (
                not isinstance(m, Mapping)
                or m.get("role") not in _ROLES
                or not isinstance(m.get("content"), str)
            ):
                raise FormatError(f"item {i} needs a role and text content", field="messages")
            messages.append({"role": m["role"], "content": m["content"]})
        reasoning = data.get("reasoning")
        if reasoning is not None and (
            not isinstance(reasoning, list) or not all(isinstance(r, str) for r in reasoning)
        ):
            raise FormatError("must be a list of text", field="reasoning")
        return cls(tuple(messages), tuple(reasoning) if reasoning is not None else None)


def episode_to_sft(
    system_prompt: str, steps: Sequence[StepResult], *, include_reasoning: bool = False
) -> SftRecord:
    """One SFT conversation from an episode's steps (observations as the agent saw them)."""
    messages: list[Message] = [{"role": "system", "content": system_prompt}]
    for s in steps:
        messages.append({"role": "user", "content": s.action})
        messages.append({"role": "assistant", "content": s.observation})
    reasoning = tuple(s.reasoning for s in steps) if include_reasoning else None
    return SftRecord(tuple(messages), reasoning)


def dump_sft(record: SftRecord) -> str:
    return dumps(record.to_dict())


def iter_sft(source: str | Path | Iterable[str]) -> Iterator[SftRecord | FormatError]:
    return iter_records(source, SftRecord.from_dict)


def write_sft(records: Iterable[SftRecord], target: str | Path | IO[str]) -> None:
    write_lines((dump_sft(r) for r in records), target)
