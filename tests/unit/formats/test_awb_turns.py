"""AgentWorldBench turn text: read and rendered exactly, whatever sections and fence a row uses."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from simulator.awb_turns import (
    INSTRUCTION,
    STATE,
    TASK,
    read_observation,
    read_turn,
    render_observation,
    render_turn,
)

AWB = Path(__file__).parents[2] / "fixtures" / "agentworldbench" / "synthetic_terminal.jsonl"
KEYSTROKES = '[\n  {\n    "keystrokes": "pwd\\n",\n    "duration": 0.1\n  }\n]'


def test_the_fixture_turns_read_and_render_back_exactly():
    last = [json.loads(line) for line in AWB.read_text().splitlines()][-1]
    first = read_turn(last["prompt"][0])
    assert first is not None
    assert (first.index, first.fence, first.action) == (1, "json", KEYSTROKES)
    assert first.section(STATE) == "root@host:/app#"
    assert (
        render_turn(1, KEYSTROKES, fence="json", sections=[(STATE, "root@host:/app#")])
        == (last["prompt"][0])
    )
    current = read_turn(last["current_prompt"])
    assert current is not None and current.sections == () and current.index == 3
    assert last["prompt"][2] == last["current_prompt"] + INSTRUCTION
    assert render_observation("root@host:/app# pwd\n/app\nroot@host:/app#") == last["response"][0]
    assert read_observation(last["response"][0]) == "root@host:/app# pwd\n/app\nroot@host:/app#"


def test_task_instruction_before_current_state_is_two_sections_not_the_action():
    text = (
        "### Turn 1\n**Task Instruction:**\nTurn on dark mode\n\n"
        "**Current State:**\nwindow 'Settings'\n  button 'Dark'\n\n"
        "**Action:**\n```python\nimport pyautogui\npyautogui.click(10, 20)\n```"
    )
    turn = read_turn(text)
    assert turn is not None
    assert turn.section(TASK) == "Turn on dark mode"
    assert turn.section(STATE) == "window 'Settings'\n  button 'Dark'"
    assert turn.action == "import pyautogui\npyautogui.click(10, 20)"
    assert turn.fence == "python"


def test_any_fence_language_or_none_and_extra_sections():
    phone = "### Turn 2\n**Current Phone State:**\nHome screen\n\n**Action:**\n```\ntouch <button id=3>OK</button>\n```"
    turn = read_turn(phone)
    assert (
        turn is not None
        and turn.fence == ""
        and turn.section("Current Phone State") == "Home screen"
    )
    bare = read_turn("### Turn 4\n**Action:**\nclick('12')")
    assert bare is not None and (bare.fence, bare.action) == (None, "click('12')")


def test_text_that_is_not_a_turn_is_refused_not_misread():
    assert read_turn("click('12')") is None
    assert read_turn("### Turn 1\nno sections here") is None
    assert read_turn("### Turn 1\n**Current State:**\nonly a state") is None


@given(
    st.integers(1, 500),
    st.text(),
    st.sampled_from([None, "", "json", "python", "bash"]),
    st.lists(
        st.tuples(st.sampled_from([TASK, STATE, "Current Phone State"]), st.text()), max_size=3
    ),
)
def test_reading_never_changes_what_it_reads(index, action, fence, sections):
    text = render_turn(index, action, fence=fence, sections=sections)
    turn = read_turn(text)
    if turn is not None:
        assert (
            render_turn(turn.index, turn.action, fence=turn.fence, sections=turn.sections) == text
        )
