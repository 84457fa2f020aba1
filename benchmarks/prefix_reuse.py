"""How much of each world-model request the previous request already covered.

Runs a 30-step episode against a fake backend with prompted and enforced
perturbations firing, and prints the prefix-reuse fraction: for each pair of
consecutive requests, the characters request k+1 shares with request k from the
start, divided by request k's characters, averaged. A server's prefix cache
(SGLang's radix cache) can reuse at most that much. Nothing here is timed.

    .venv/bin/python benchmarks/prefix_reuse.py
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.backends.base import Chunk, Health, ModelRequest  # noqa: E402
from simulator.domains.base import Action, Domain  # noqa: E402
from simulator.engine import step  # noqa: E402
from simulator.episode import EpisodeState  # noqa: E402
from simulator.perturbations import Perturbation, Trigger  # noqa: E402
from simulator.prompting import CONTROL_OPEN, render_transcript, shared_prefix_chars  # noqa: E402
from simulator.types import Message  # noqa: E402
from simulator.world import World  # noqa: E402

STEPS = 30


class _Backend:
    name = "bench"

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        n = len(request.messages)
        body = "\n".join(f"row {n}.{i}: value {i * n}" for i in range(12))
        yield Chunk("reasoning", "thinking")
        yield Chunk("content", f"<predicted_observation>{body}</predicted_observation>")
        yield Chunk("finish", finish_reason="stop")

    async def health(self) -> Health:
        return Health(ok=True, detail="bench")

    async def info(self) -> dict[str, Any]:
        return {}

    async def aclose(self) -> None:
        return None


def perturbations() -> tuple[Perturbation, ...]:
    return (
        Perturbation(
            "instruction", "prompted", {"text": "Mention a disk warning."}, Trigger(probability=0.4)
        ),
        Perturbation("error_injection", "prompted", {}, Trigger(first_step=5, last_step=9)),
        Perturbation("truncation", "enforced", {"max_chars": 120}, Trigger(probability=0.5)),
        Perturbation("pagination", "enforced", {"page_size": 4}, Trigger(first_step=10)),
        Perturbation("distractor", "enforced", {}, Trigger(probability=0.3, seed=7)),
    )


def instructions_in_system(messages: list[Message]) -> list[Message]:
    """The baseline layout: this step's control block moved into the system prompt."""
    current = messages[-1]["content"]
    action, sep, block = current.partition("\n\n" + CONTROL_OPEN)
    system: Message = {"role": "system", "content": messages[0]["content"] + sep + block}
    return [system, *messages[1:-1], {"role": "user", "content": action}]


async def run_episode(world: World) -> tuple[list[str], list[str]]:
    """Transcripts of every request, as sent and in the baseline layout."""
    state = EpisodeState(world=world, task="Tidy the logs.", perturbations=perturbations(), seed=3)
    sent, baseline = [], []
    for k in range(1, STEPS + 1):
        result = await step(state, f"cat /var/log/app-{k}.log", _Backend())
        sent.append(render_transcript(result.messages))
        baseline.append(render_transcript(instructions_in_system(list(result.messages))))
        state = state.advance(result)
    return sent, baseline


def reuse_fraction(transcripts: list[str]) -> float:
    fractions = [
        shared_prefix_chars(a, b) / len(a)
        for a, b in zip(transcripts, transcripts[1:], strict=False)
    ]
    return sum(fractions) / len(fractions)


def main() -> None:
    from simulator.domains import register

    class BenchDomain(Domain):
        name = "bench"
        title = "Bench"
        observation_formats = ("text",)
        renderer = "text"

        def system_prompt(self, world: World) -> str:
            return "You simulate a Linux host's log directory.\n" * 20

        def parse_action(self, raw: str, world: World) -> Action:
            return Action(raw=raw, kind="command")

        def detect_format(self, observation: str) -> str | None:
            return "text"

    register(BenchDomain())
    sent, baseline = asyncio.run(run_episode(World(domain="bench", title="Logs")))
    fraction = reuse_fraction(sent)
    base = reuse_fraction(baseline)
    print(f"steps: {STEPS}, final request: {len(sent[-1])} chars")
    print(f"prefix reuse, instructions in the current user message: {fraction:.4f}")
    print(f"prefix reuse, baseline with instructions in the system prompt: {base:.4f}")
    print(f"ratio: {fraction / base:.2f}x")


if __name__ == "__main__":
    main()
