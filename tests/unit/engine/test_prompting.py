from __future__ import annotations

import pytest

from simulator.episode import Turn
from simulator.errors import InvalidWorld
from simulator.prompting import (
    CONTROL_OPEN,
    build_messages,
    estimate_tokens,
    render_transcript,
    shared_prefix_chars,
)
from tests.unit.engine.fakes import make_world


def test_it_builds_system_history_and_current_action():
    world = make_world(premise="A tiny shop.")
    history = (Turn("ls", "a.txt"), Turn("cat a.txt", "hello"))
    messages = build_messages(world, history, "pwd", task="Find the price.")
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert messages[0]["content"].startswith("You simulate Test world.\nA tiny shop.")
    assert messages[0]["content"].endswith("# The agent's task\n\nFind the price.")
    assert [m["content"] for m in messages[1:]] == ["ls", "a.txt", "cat a.txt", "hello", "pwd"]


def test_instructions_go_into_the_current_user_message_only():
    world = make_world()
    messages = build_messages(world, (Turn("ls", "x"),), "pwd", instructions=["Fail.", "Be slow."])
    assert messages[1]["content"] == "ls"
    current = messages[-1]["content"]
    assert current.startswith("pwd\n\n" + CONTROL_OPEN) and "- Fail.\n- Be slow.\n" in current
    assert all(CONTROL_OPEN not in m["content"] for m in messages[:-1])


def test_without_task_or_instructions_nothing_is_added():
    messages = build_messages(make_world(), (), "pwd")
    assert messages[-1]["content"] == "pwd" and "task" not in messages[0]["content"]


def test_an_unknown_domain_is_an_invalid_world():
    with pytest.raises(InvalidWorld, match="unknown domain 'nowhere'"):
        build_messages(make_world(domain="nowhere"), (), "x")


def test_shared_prefix_and_transcript():
    assert shared_prefix_chars("abcdef", "abcxyz") == 3
    assert shared_prefix_chars("", "abc") == 0
    assert shared_prefix_chars("same", "same") == 4
    assert render_transcript([{"role": "user", "content": "hi"}]) == "<|user|>\nhi\n"


def test_estimate_tokens_is_chars_over_four_plus_overhead():
    assert (
        estimate_tokens(
            [{"role": "user", "content": "x" * 40}, {"role": "assistant", "content": "y"}]
        )
        == 10 + 4 + 1 + 4
    )
