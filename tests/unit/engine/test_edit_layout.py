"""The edit layout: the embedded demo model is handed the previous observation to edit."""

from __future__ import annotations

from simulator.episode import Turn
from simulator.prompting import EDIT_HEADING_PREVIOUS, EDIT_NOTHING_YET, build_messages
from tests.unit.engine.fakes import make_world


def test_the_first_step_edits_the_initial_state():
    world = make_world(initial_observation="<html><body>Shop</body></html>")
    messages = build_messages(world, (), "click('6')", task="Buy honey.", layout="edit")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert f"{EDIT_HEADING_PREVIOUS}\n\n<html><body>Shop</body></html>" in user
    assert user.index("Buy honey.") < user.index(EDIT_HEADING_PREVIOUS) < user.index("click('6')")
    assert "copy the current observation" in user


def test_later_steps_edit_the_last_observation_and_list_earlier_actions():
    world = make_world(initial_observation="first screen")
    history = (Turn("ls", "a.txt\n$ "), Turn("touch b", "$ "))
    user = build_messages(world, history, "ls", layout="edit")[1]["content"]
    assert "# Earlier actions\n\n1. ls\n2. touch b" in user
    assert f"{EDIT_HEADING_PREVIOUS}\n\n$" in user
    assert "first screen" not in user


def test_an_empty_start_is_said_to_be_empty_and_not_offered_for_copying():
    user = build_messages(make_world(initial_observation=""), (), "search()", layout="edit")[1]
    assert EDIT_NOTHING_YET in user["content"]
    assert "copy the current observation" not in user["content"]
