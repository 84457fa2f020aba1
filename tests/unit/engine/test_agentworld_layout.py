"""The agentworld layout: AgentWorldBench's turn text, request by request."""

from __future__ import annotations

import json

from simulator.awb_turns import INSTRUCTION, OBSERVATION_MARKER, read_turn
from simulator.backends.base import Chunk
from simulator.domains import get_domain
from simulator.engine import step
from simulator.episode import Delta, EpisodeState, Turn
from simulator.perturbations import Perturbation, Trigger
from simulator.prompting import (
    CONTROL_CLOSE,
    CONTROL_OPEN,
    CONTROL_PREAMBLE,
    TASK_HEADING,
    build_messages,
    fill_system_template,
)
from simulator.world import World
from tests.unit.engine.fakes import FakeBackend, answer

TERMINAL = World(
    domain="terminal",
    title="Build box",
    premise="A Debian machine.",
    initial_observation="alice@box:/srv/app$ ",
)
KEYS = '[{"keystrokes": "ls\\n", "duration": 0.1}]'


async def test_a_terminal_episode_is_sent_as_benchmark_turns_with_the_instruction_on_the_last():
    shout = Perturbation(
        "instruction", "prompted", {"text": "Say the disk is full."}, Trigger(2, 2)
    )
    state = EpisodeState(world=TERMINAL, perturbations=(shout,), layout="agentworld")
    backend = FakeBackend([answer("obs one", "r1"), answer("obs two"), answer("obs three")])
    results = []
    for action in ("pwd", KEYS, "whoami"):
        result = await step(state, action, backend)
        results.append(result)
        state = state.advance(result)

    system, *turns = results[2].messages
    assert system["role"] == "system"
    assert "alice@box" not in system["content"]  # the first turn carries the initial state
    assert "Initial state" not in system["content"]
    assert turns == [
        {
            "role": "user",
            "content": "### Turn 1\n**Current State:**\nalice@box:/srv/app$ \n\n"
            "**Action:**\n```json\npwd\n```",
        },
        {"role": "assistant", "content": f"{OBSERVATION_MARKER}\nobs one"},
        {"role": "user", "content": f"### Turn 2\n**Action:**\n```json\n{KEYS}\n```"},
        {"role": "assistant", "content": f"{OBSERVATION_MARKER}\nobs two"},
        {"role": "user", "content": "### Turn 3\n**Action:**\n```json\nwhoami\n```" + INSTRUCTION},
    ]
    # The control text went into turn 2 while it was current, before the instruction, ...
    assert results[1].messages[-1]["content"] == (
        f"### Turn 2\n**Action:**\n```json\n{KEYS}\n```\n\n{CONTROL_OPEN}\n{CONTROL_PREAMBLE}\n"
        f"- Say the disk is full.\n{CONTROL_CLOSE}" + INSTRUCTION
    )
    # ... and never into history; past turns are exactly the benchmark's turn text.
    assert all(CONTROL_OPEN not in m["content"] for m in results[2].messages)
    assert sum(INSTRUCTION in m["content"] for m in results[2].messages) == 1
    assert read_turn(turns[2]["content"]) is not None
    assert read_turn(turns[4]["content"].removesuffix(INSTRUCTION)) is not None
    # Each request repeats the previous one up to its last turn.
    for before, after in zip(results, results[1:], strict=False):
        assert after.messages[: len(before.messages) - 1] == before.messages[:-1]
        assert (
            after.messages[len(before.messages) - 1]["content"]
            == (
                before.messages[-1]["content"]
                .removesuffix(INSTRUCTION)
                .partition(f"\n\n{CONTROL_OPEN}")[0]
            )
        )


def test_the_os_task_opens_the_first_turn_and_leaves_the_system_prompt():
    world = World(domain="os", title="Desk", initial_observation="tag\tname\nbutton\tOK")
    history = (Turn("pyautogui.click(10, 20)", "tag\tname"),)
    messages = build_messages(world, history, "DONE", task="Turn on dark mode", layout="agentworld")
    assert "Turn on dark mode" not in messages[0]["content"]
    assert messages[1]["content"] == (
        "### Turn 1\n**Task Instruction:**\nTurn on dark mode\n\n"
        "**Current State:**\ntag\tname\nbutton\tOK\n\n"
        "**Action:**\n```python\npyautogui.click(10, 20)\n```"
    )
    assert messages[3]["content"] == "### Turn 2\n**Action:**\n```python\nDONE\n```" + INSTRUCTION


def test_a_first_step_carries_its_sections_and_the_instruction_together():
    world = World(domain="web", title="Shop", initial_observation="<html></html>")
    messages = build_messages(world, (), "```python\nclick('12')\n```", layout="agentworld")
    assert messages[1]["content"] == (
        "### Turn 1\n**Current State:**\n<html></html>\n\n"
        "**Action:**\n```python\nclick('12')\n```" + INSTRUCTION  # an agent's fence is not doubled
    )


def test_other_domains_keep_the_task_in_the_system_prompt_and_plain_is_unchanged():
    agentworld = build_messages(TERMINAL, (), "pwd", task="Fix the build.", layout="agentworld")
    plain = build_messages(TERMINAL, (), "pwd", task="Fix the build.")
    assert agentworld[0]["content"].endswith(f"{TASK_HEADING}\n\nFix the build.")
    assert "Fix the build." not in agentworld[1]["content"]
    domain_prompt = get_domain("terminal").system_prompt(TERMINAL)
    assert plain == [
        {"role": "system", "content": f"{domain_prompt}\n\n{TASK_HEADING}\n\nFix the build."},
        {"role": "user", "content": "pwd"},
    ]
    assert "alice@box:/srv/app$" in plain[0]["content"]


def test_an_official_template_is_filled_with_tools_and_demonstrations_not_formatted():
    tool = {"name": "get_user", "description": "Look up {id}", "input_schema": {"type": "object"}}
    world = World(
        domain="mcp",
        title="CRM",
        extras={
            "tools": [tool],
            "demonstrations": [{"action": '{"name": "get_user"}', "observation": '{"id": 1}'}],
        },
    )
    template = 'Tools:\n{tool_definitions}\nExamples:\n{demonstrations}\nAnswer {"x": 1}.'
    filled = fill_system_template(template, world)
    assert filled == (
        f"Tools:\n{json.dumps([tool], ensure_ascii=False, indent=2)}\nExamples:\n"
        '### Turn 1\n**Action:**\n```json\n{"name": "get_user"}\n```\n\n'
        f'{OBSERVATION_MARKER}\n{{"id": 1}}\nAnswer {{"x": 1}}.'
    )
    bare = World(domain="mcp", title="Empty")
    assert fill_system_template(template, bare) == 'Tools:\n\nExamples:\n\nAnswer {"x": 1}.'
    system = build_messages(world, (), "x", layout="agentworld", system_template=template)[0]
    assert system["content"] == filled
    # Plain ignores a template: it is the official prompt of the agentworld layout only.
    plain = build_messages(world, (), "x", system_template=template)[0]
    assert plain["content"] == get_domain("mcp").system_prompt(world)


async def test_without_a_reasoning_parser_the_thinking_still_streams_as_reasoning():
    raw = "The agent lists files.</think>\n<predicted_observation>a.txt</predicted_observation>"
    chunks = [Chunk("content", raw[i : i + 5]) for i in range(0, len(raw), 5)]
    deltas: list[Delta] = []
    state = EpisodeState(world=TERMINAL, layout="agentworld")

    result = await step(
        state, "ls", FakeBackend([[*chunks, Chunk("finish")]]), on_delta=deltas.append
    )

    streamed = {
        kind: "".join(d.text for d in deltas if d.kind == kind)
        for kind in ("reasoning", "observation")
    }
    assert streamed == {"reasoning": "The agent lists files.\n", "observation": "a.txt"}
    assert (result.reasoning, result.observation) == ("The agent lists files.", "a.txt")
