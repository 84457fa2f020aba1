"""Splitting a world model's raw output into reasoning and observation.

Qwen-AgentWorld thinks inside ``<think>`` and wraps its prediction in
``<predicted_observation>`` tags, but model output is untrusted: tags may be
unclosed, nested, repeated or missing, and servers that strip the opening
``<think>`` leave an orphan ``</think>``. :func:`parse_output` never raises; it
says in ``notes`` what it had to guess. :class:`StreamSplitter` does the cheap,
live version of the same split for streamed text; the final parse is always the
authority and replaces what was streamed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from simulator.awb_turns import OBSERVATION_MARKER

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
OBS_OPEN = "<predicted_observation>"
OBS_CLOSE = "</predicted_observation>"

_THINK_TAG = re.compile(r"</?think>")
_OBS_BLOCK = re.compile(re.escape(OBS_OPEN) + r"(.*?)" + re.escape(OBS_CLOSE), re.DOTALL)


@dataclass(frozen=True)
class ParsedOutput:
    """The parts of one answer.

    ``complete`` is False when the observation came from an unclosed tag or the
    output ended inside reasoning (typically a ``max_tokens`` cut).
    """

    reasoning: str
    observation: str
    complete: bool
    notes: tuple[str, ...] = ()


def split_reasoning(raw: str) -> tuple[str, str, tuple[str, ...]]:
    """(reasoning, remaining text, notes) for any text, with nested/unclosed/orphan tags."""
    notes: list[str] = []
    reasoning: list[str] = []
    outside: list[str] = []
    first_open = raw.find(THINK_OPEN)
    first_close = raw.find(THINK_CLOSE)
    position = 0
    if first_close >= 0 and (first_open < 0 or first_close < first_open):
        reasoning.append(raw[:first_close])
        position = first_close + len(THINK_CLOSE)
        notes.append("orphan </think>: the text before it is reasoning")
    depth = 0
    for match in _THINK_TAG.finditer(raw, position):
        piece = raw[position : match.start()]
        (reasoning if depth else outside).append(piece)
        if match.group() == THINK_OPEN:
            if depth:
                reasoning.append(match.group())
            depth += 1
        elif depth:
            depth -= 1
            if depth:
                reasoning.append(match.group())
        else:
            notes.append("stray </think> ignored")
        position = match.end()
    (reasoning if depth else outside).append(raw[position:])
    if depth:
        notes.append("unclosed <think>: output ended inside reasoning")
    return "".join(reasoning).strip(), "".join(outside), tuple(notes)


def _clean(observation: str) -> str:
    text = observation.strip("\r\n")
    if text.lstrip().startswith(OBSERVATION_MARKER):
        text = text.lstrip()[len(OBSERVATION_MARKER) :].strip("\r\n")
    return text


def _observation(text: str) -> tuple[str, bool, str] | None:
    """(observation, complete, note) from tagged text, or None when there is no tag."""
    blocks = _OBS_BLOCK.findall(text)
    if blocks:
        note = f"{len(blocks)} observation blocks: took the last" if len(blocks) > 1 else ""
        return blocks[-1], True, note
    start = text.rfind(OBS_OPEN)
    if start >= 0:
        return text[start + len(OBS_OPEN) :], False, "unclosed <predicted_observation>"
    return None


def parse_output(raw: str) -> ParsedOutput:
    """Reasoning and observation of a raw answer; never raises."""
    reasoning, outside, think_notes = split_reasoning(raw)
    notes = list(think_notes)
    ended_in_reasoning = any(n.startswith("unclosed <think>") for n in think_notes)
    found = _observation(outside)
    if found is None and not outside.strip():
        found = _observation(reasoning)
        if found is not None:
            notes.append("observation recovered from inside the reasoning")
    if found is None:
        notes.append("no <predicted_observation> tag: used the text outside reasoning")
        observation, complete = outside, not ended_in_reasoning
    else:
        observation, complete, note = found
        if note:
            notes.append(note)
    return ParsedOutput(reasoning, _clean(observation), complete, tuple(notes))


_TAGS = (THINK_OPEN, THINK_CLOSE, OBS_OPEN, OBS_CLOSE)


class StreamSplitter:
    """Route streamed content text live: ``feed(chunk) -> (reasoning, observation)``.

    Text inside ``<think>`` goes to reasoning and text inside
    ``<predicted_observation>`` to the observation; other text goes to
    ``outside``: the observation by default, reasoning when the model was told
    to think before a tagged observation (the agentworld layout), so a model
    served without a reasoning parser, whose thoughts end at an orphan
    ``</think>``, still streams them into the reasoning pane. A tag split across
    chunks is held back until it can be told apart from text. Whatever went to
    the wrong pane is corrected by the final :func:`parse_output`.
    """

    def __init__(self, outside: Literal["reasoning", "observation"] = "observation") -> None:
        self._pending = ""
        self._depth = 0
        self._in_observation = False
        self._outside = outside

    def feed(self, chunk: str) -> tuple[str, str]:
        text = self._pending + chunk
        self._pending = ""
        reasoning: list[str] = []
        observation: list[str] = []
        position = 0
        while True:
            start = text.find("<", position)
            if start < 0:
                break
            rest = text[start:]
            tag = next((t for t in _TAGS if rest.startswith(t)), None)
            if tag is None:
                if any(t.startswith(rest) for t in _TAGS):
                    self._route(text[position:start], reasoning, observation)
                    self._pending = rest
                    return "".join(reasoning), "".join(observation)
                position_next = start + 1
                self._route(text[position:position_next], reasoning, observation)
                position = position_next
                continue
            self._route(text[position:start], reasoning, observation)
            if tag == THINK_OPEN:
                self._depth += 1
            elif tag == THINK_CLOSE:
                self._depth = max(0, self._depth - 1)
            else:
                self._in_observation = tag == OBS_OPEN
            position = start + len(tag)
        self._route(text[position:], reasoning, observation)
        return "".join(reasoning), "".join(observation)

    def finish(self) -> tuple[str, str]:
        """Flush text held back at the end of the stream."""
        reasoning: list[str] = []
        observation: list[str] = []
        self._route(self._pending, reasoning, observation)
        self._pending = ""
        return "".join(reasoning), "".join(observation)

    def _route(self, text: str, reasoning: list[str], observation: list[str]) -> None:
        if not text:
            return
        if self._depth:
            reasoning.append(text)
        elif self._in_observation or self._outside == "observation":
            observation.append(text)
        else:
            reasoning.append(text)
