"""How much of each world-model request the previous request already covered.

Runs a 30-step terminal episode against a fake backend with prompted and
enforced perturbations firing, in each prompt layout (``plain`` and ``agentworld``), and
prints the prefix-reuse fraction: for each pair of consecutive requests, the
characters request k+1 shares with request k from the start, divided by request
k's characters, averaged. A server's prefix cache (SGLang's radix cache) can
reuse at most that much. In the agentworld layout the answered turn ends with
the benchmark's instruction, which the next request drops, so its fraction is a
little lower. Nothing here is timed.

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
from simulator.engine import step  # noqa: E402
from simulator.episode import EpisodeState  # noqa: E402
from simulator.perturbations import Perturbation, Trigger  # noqa: E402
from simulator.prompting import (  # noqa: E402
    CONTROL_CLOSE,
    CONTROL_OPEN,
    render_transcript,
    shared_prefix_chars,
)
from simulator.types import PROMPT_LAYOUTS, Message, PromptLayout  # noqa: E402
from simulator.world import World  # noqa: E402

STEPS = 30
#: Each observation is one terminal screen (24 lines of log output, ~70 columns): the
#: size of a real step's answer, so the fixed per-request cost (the control block,
#: the agentworld layout's answer instruction) weighs what it would in an episode.
SCREEN_LINES = 24


class _Backend:
    name = "bench"

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        n = len(request.messages)
        body = "\n".join(
            f"2026-12-04 14:{n % 60:02d}:{i:02d} INFO app.worker[{n}]: batch {i} done, "
            f"{i * n} rows in 0.{i:02d}s"
            for i in range(SCREEN_LINES)
        )
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
    """The baseline: this step's control block moved into the system prompt."""
    current = messages[-1]["content"]
    before, sep, rest = current.partition("\n\n" + CONTROL_OPEN)
    block, close, after = rest.partition(CONTROL_CLOSE)
    system: Message = {"role": "system", "content": messages[0]["content"] + sep + block + close}
    return [system, *messages[1:-1], {"role": "user", "content": before + after}]


async def run_episode(world: World, layout: PromptLayout) -> tuple[list[str], list[str]]:
    """Transcripts of every request, as sent and in the baseline layout."""
    state = EpisodeState(
        world=world, task="Tidy the logs.", perturbations=perturbations(), seed=3, layout=layout
    )
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


#: A live terminal episode's world: the request carries the real terminal domain's
#: system prompt, so the fixed costs are weighed against what an episode really sends.
WORLD = World(
    domain="terminal",
    title="Logs",
    premise="A Debian host whose app writes its logs to /var/log.",
    initial_observation="root@logs:/var/log# ",
)


def main() -> None:
    for layout in PROMPT_LAYOUTS:
        sent, baseline = asyncio.run(run_episode(WORLD, layout))
        fraction = reuse_fraction(sent)
        base = reuse_fraction(baseline)
        print(f"[{layout} layout] steps: {STEPS}, final request: {len(sent[-1])} chars")
        print(f"  prefix reuse, instructions in the current user message: {fraction:.4f}")
        print(f"  prefix reuse, baseline with instructions in the system prompt: {base:.4f}")
        print(f"  ratio: {fraction / base:.2f}x")


if __name__ == "__main__":
    main()
