"""transformers hooks for :mod:`simulator.backends.local`; imported only in its worker thread.

Kept apart so importing :mod:`simulator.backends` never imports transformers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import torch
from transformers import LogitsProcessor, StoppingCriteria, TextStreamer


class QueueStreamer(TextStreamer):
    """A ``TextStreamer`` whose finished text pieces go to ``emit`` instead of stdout.

    It reuses the streamer's incremental decoding (pieces end at word boundaries) and
    hands them straight to the event loop, without ``TextIteratorStreamer``'s extra
    queue and thread hop per token. ``count`` hears about every generated token.
    """

    def __init__(
        self, tokenizer: Any, emit: Callable[[str], None], count: Callable[[int], None]
    ) -> None:
        super().__init__(tokenizer, skip_prompt=True, skip_special_tokens=True)
        self._emit = emit
        self._count = count
        self.tokens = 0

    def put(self, value: Any) -> None:
        if not self.next_tokens_are_prompt:
            generated = int(value.numel())
            self.tokens += generated
            self._count(generated)
        super().put(value)  # type: ignore[no-untyped-call]

    def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
        if text:
            self._emit(text)


class EventStoppingCriteria(StoppingCriteria):
    """Stops generation after the current token once ``event`` is set (the stream was closed)."""

    def __init__(self, event: threading.Event) -> None:
        self._event = event

    def __call__(
        self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: Any
    ) -> torch.BoolTensor:
        stopped = torch.full((input_ids.shape[0],), self._event.is_set(), dtype=torch.bool)
        return stopped  # type: ignore[return-value]


class NoEarlyEnd(LogitsProcessor):
    """Bans ``token_ids`` for the first ``steps`` generated tokens.

    Given an opened observation tag, a small model sometimes closes it (or ends its
    answer) at once; an empty observation fails the step. Banning the closing tag's
    first token and end-of-text for a few tokens makes it write something first.
    """

    def __init__(self, token_ids: list[int], prompt_length: int, steps: int) -> None:
        self._token_ids = sorted(set(token_ids))
        self._prompt_length = prompt_length
        self._steps = steps

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if input_ids.shape[1] - self._prompt_length < self._steps:
            scores[:, self._token_ids] = -float("inf")
        return scores
