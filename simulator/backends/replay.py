"""Replay: a backend that answers with a recorded trace's observations.

It is the "real" side of simulated-versus-real comparisons, and a world model
that needs no model at all for demos and tests.

Which observation answers a request: the request for turn *k* holds *k* user
messages (the history's actions plus the current one), so it gets observation
*k* (``observations[k - 1]``). Replaying the same turn twice gives the same
observation, whatever was asked before. A callable chooses freely instead.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from simulator.backends._text import count_user_turns, stream_canned, wrap_observation
from simulator.backends.base import Chunk, Health, ModelRequest
from simulator.errors import BackendError, FormatError
from simulator.formats._jsonl import json_lines

ObservationSource = Sequence[str] | Callable[[ModelRequest], str]


class ReplayBackend:
    """Streams recorded observations, wrapped in ``<predicted_observation>`` tags.

    ``reasoning`` (optional) holds one reasoning text per turn, streamed before the
    observation. Each ``chunk_size`` characters are one chunk and count as one token.
    """

    name = "replay"

    def __init__(
        self,
        observations: ObservationSource,
        *,
        reasoning: Sequence[str] | None = None,
        chunk_size: int = 16,
    ) -> None:
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self._observations = observations
        self._reasoning = reasoning
        self._chunk_size = chunk_size

    @classmethod
    def from_awb_rows(
        cls, rows: Iterable[Mapping[str, Any]], *, episode_id: Any = None, chunk_size: int = 16
    ) -> ReplayBackend:
        """Replay one AgentWorldBench episode: row ``turn_idx`` k gives observation k (``response[-1]``).

        Rows of several episodes need ``episode_id`` to pick one.
        """
        chosen = [r for r in rows if episode_id is None or r.get("id") == episode_id]
        ids = {json.dumps(r.get("id")) for r in chosen}
        if len(ids) > 1:
            raise FormatError("rows of several episodes; pass episode_id", field="id")
        by_turn: dict[int, str] = {}
        for row in chosen:
            turn, response = row.get("turn_idx"), row.get("response")
            if not isinstance(turn, int) or turn < 1:
                raise FormatError("must be a positive integer", field="turn_idx")
            if not isinstance(response, list) or not response or not isinstance(response[-1], str):
                raise FormatError("must be a non-empty list of text", field="response")
            by_turn[turn] = response[-1]
        missing = [t for t in range(1, len(by_turn) + 1) if t not in by_turn]
        if missing:
            raise FormatError(f"turns missing: {missing}", field="turn_idx")
        return cls([by_turn[t] for t in sorted(by_turn)], chunk_size=chunk_size)

    @classmethod
    def from_jsonl(
        cls, path: str | Path, *, episode_id: Any = None, chunk_size: int = 16
    ) -> ReplayBackend:
        """Read ``{"observation": ...}`` lines in order, or AgentWorldBench rows (detected by ``response``)."""
        rows: list[dict[str, Any]] = []
        for item in json_lines(path):
            if isinstance(item, FormatError):
                raise item
            row = item.value
            if not isinstance(row, dict):
                raise FormatError("each line must be an object", line=item.number)
            if "response" not in row and not isinstance(row.get("observation"), str):
                raise FormatError("needs observation text or AWB response", line=item.number)
            rows.append(row)
        if rows and all("response" in r for r in rows):
            return cls.from_awb_rows(rows, episode_id=episode_id, chunk_size=chunk_size)
        if any("response" in r for r in rows):
            raise FormatError("mixes observation lines and AWB rows")
        return cls([r["observation"] for r in rows], chunk_size=chunk_size)

    def recorded_observations(self) -> list[str]:
        """The observations in turn order; raises TypeError when a callable chooses them."""
        if callable(self._observations):
            raise TypeError("this replay chooses observations with a callable")
        return list(self._observations)

    def observation_for(self, request: ModelRequest) -> str:
        """The recorded observation that answers ``request`` (see the module docstring)."""
        if callable(self._observations):
            return self._observations(request)
        turn = count_user_turns(request.messages)
        if not 1 <= turn <= len(self._observations):
            raise BackendError(
                f"replay has {len(self._observations)} observations, none for turn {turn}"
            )
        return self._observations[turn - 1]

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        observation = self.observation_for(request)
        turn = count_user_turns(request.messages)
        reasoning = ""
        if self._reasoning is not None and 1 <= turn <= len(self._reasoning):
            reasoning = self._reasoning[turn - 1]
        async for chunk in stream_canned(
            wrap_observation(observation),
            reasoning=reasoning,
            chunk_size=self._chunk_size,
            max_tokens=request.sampling.max_tokens,
        ):
            yield chunk

    async def health(self) -> Health:
        return Health(ok=True, detail="replay needs no server", latency_ms=0.0)

    async def info(self) -> dict[str, Any]:
        count = None if callable(self._observations) else len(self._observations)
        return {"backend": "replay", "model": "replay", "observations": count}

    async def aclose(self) -> None:
        return None
