"""Every request extends the previous one: the prefix-cache property."""

from __future__ import annotations

from simulator.awb_turns import INSTRUCTION, OBSERVATION_MARKER, render_turn
from simulator.backends.base import ModelRequest
from simulator.engine import step
from simulator.episode import EpisodeState, StepResult
from simulator.perturbations import Perturbation, Trigger
from simulator.prompting import CONTROL_OPEN, render_transcript, shared_prefix_chars
from simulator.world import World
from tests.unit.engine.fakes import FakeBackend, answer, make_world


def varied_answer(request: ModelRequest):
    n = len(request.messages)
    return answer(
        "\n".join(f"item {n}-{i} \u00e9\x1b[1m<b>" for i in range(10)), reasoning=f"step {n}"
    )


def perturbations() -> tuple[Perturbation, ...]:
    return (
        Perturbation(
            "instruction", "prompted", {"text": "Add a warning."}, Trigger(probability=0.5)
        ),
        Perturbation("error_injection", "prompted", {}, Trigger(first_step=3, last_step=6)),
        Perturbation("truncation", "enforced", {"max_chars": 40}, Trigger(probability=0.5, seed=1)),
        Perturbation(
            "distractor",
            "enforced",
            {"style": "irrelevant", "content": "ad"},
            Trigger(action_pattern="7"),
        ),
        Perturbation("pagination", "enforced", {"page_size": 3}, Trigger(first_step=20)),
    )


async def thirty_steps(state: EpisodeState) -> list[StepResult]:
    backend = FakeBackend(varied_answer)
    results = []
    for k in range(1, 31):
        result = await step(state, f"list page {k}", backend)
        results.append(result)
        state = state.advance(result)
    return results


async def test_thirty_steps_with_perturbations_keep_every_earlier_message_byte_identical():
    state = EpisodeState(
        world=make_world(), task="Count items.", perturbations=perturbations(), seed=42
    )
    results = await thirty_steps(state)

    prompted = sum(1 for r in results for f in r.firings if f.mode == "prompted")
    enforced = sum(1 for r in results for f in r.firings if f.mode == "enforced" and f.changed)
    assert prompted >= 5 and enforced >= 5

    for before, after in zip(results, results[1:], strict=False):
        previous, current = before.messages, after.messages
        # Every message but the last (the current user message) reappears byte for byte.
        assert current[: len(previous) - 1] == previous[:-1]
        # The last user message comes back as the bare action, without its instructions.
        assert current[len(previous) - 1]["content"] == before.action
        assert current[len(previous)]["content"] == before.observation
        # Measured on the rendering: all of request k up to its current user message is shared.
        shared = shared_prefix_chars(render_transcript(previous), render_transcript(current))
        assert shared >= len(render_transcript(previous[:-1])) + len("<|user|>\n") + len(
            before.action
        )
    assert all(CONTROL_OPEN not in m["content"] for m in results[-1].messages[:-1])
    assert all(
        "step " not in m["content"] for m in results[-1].messages if m["role"] == "assistant"
    )


async def test_the_agentworld_layout_extends_each_request_with_perturbations_firing():
    world = World(domain="terminal", title="Box", initial_observation="root@box:/# ")
    state = EpisodeState(
        world=world,
        task="Count items.",
        perturbations=perturbations(),
        seed=42,
        layout="agentworld",
    )
    results = await thirty_steps(state)

    prompted = [i for i, r in enumerate(results) if any(f.mode == "prompted" for f in r.firings)]
    enforced = sum(1 for r in results for f in r.firings if f.mode == "enforced" and f.changed)
    assert len(prompted) >= 5 and enforced >= 5
    assert all(CONTROL_OPEN in results[i].messages[-1]["content"] for i in prompted)

    for k, (before, after) in enumerate(zip(results, results[1:], strict=False), 1):
        previous, current = before.messages, after.messages
        assert current[: len(previous) - 1] == previous[:-1]
        # The answered turn comes back as its benchmark turn text: no control, no instruction.
        past = current[len(previous) - 1]["content"]
        assert past == render_turn(
            k,
            before.action,
            fence="json",
            sections=[("Current State", "root@box:/# ")] if k == 1 else (),
        )
        assert previous[-1]["content"].startswith(past)
        assert current[len(previous)]["content"] == f"{OBSERVATION_MARKER}\n{before.observation}"
        shared = shared_prefix_chars(render_transcript(previous), render_transcript(current))
        assert shared >= len(render_transcript(previous[:-1])) + len("<|user|>\n") + len(past)
    final = results[-1].messages
    assert all(CONTROL_OPEN not in m["content"] for m in final[:-1])
    assert [INSTRUCTION in m["content"] for m in final].count(True) == 1
    assert final[-1]["content"].endswith(INSTRUCTION)
