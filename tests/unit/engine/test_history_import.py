from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.engine import step
from simulator.episode import (
    EpisodeState,
    Turn,
    browsergym_log_goal,
    browsergym_log_trees,
    history_from_browsergym_log,
    history_from_tau_bench,
    history_from_terminal_triple,
)
from simulator.errors import FormatError
from simulator.world import World
from tests.unit.engine.fakes import FakeBackend, answer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TAU = json.loads((FIXTURES / "mcp/tau_bench_airline_gpt-4o_record0_task0.json").read_text())
WEBARENA_LOG = (FIXTURES / "web/browsergym_webarena_190_12_shopping.log").read_text()


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (FIXTURES / "terminal_triples").glob("*.json"))
)
async def test_the_engine_continues_every_real_terminal_triple(name):
    triple = json.loads((FIXTURES / "terminal_triples" / name).read_text())
    history = history_from_terminal_triple(triple)
    assert [t.to_dict() for t in history] == triple["history"]
    world = World(domain=triple["domain"], title="Recorded shell")
    backend = FakeBackend([answer(triple["truth"]["stdout"] or "(no output)")])
    result = await step(EpisodeState(world=world, history=history), triple["action"], backend)
    sent = backend.requests[0].messages
    assert len(sent) == 2 + 2 * len(history)
    for i, turn in enumerate(history):
        assert sent[1 + 2 * i]["content"] == turn.action
        assert sent[2 + 2 * i]["content"] == turn.observation
    assert sent[-1]["content"] == triple["action"]
    assert result.observation == (triple["truth"]["stdout"] or "(no output)")


def test_terminal_triple_without_history_is_a_format_error():
    with pytest.raises(FormatError, match="history"):
        history_from_terminal_triple({"domain": "terminal"})


def test_tau_bench_history_pairs_calls_with_results_in_order_despite_reused_ids():
    history = history_from_tau_bench(TAU)
    names = [json.loads(t.action)["name"] for t in history]
    assert names == [
        "get_user_details",
        "search_direct_flight",
        "search_onestop_flight",
        "calculate",
        "book_reservation",
        "think",
        "calculate",
        "book_reservation",
    ]
    assert json.loads(history[0].action)["arguments"] == {"user_id": "mia_li_3668"}
    assert json.loads(history[0].observation)["name"] == {"first_name": "Mia", "last_name": "Li"}
    assert history[3].observation == "255.0"
    assert history[4].observation.startswith("Error: payment amount does not add up")


def test_tau_bench_without_messages_is_a_format_error():
    with pytest.raises(FormatError):
        history_from_tau_bench({"traj": None})


def test_tau_bench_keeps_unparseable_arguments_as_text():
    data = {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{bad"}}],
            },
            {"role": "tool", "tool_call_id": "zzz", "content": "done"},
            "junk",
        ]
    }
    assert history_from_tau_bench(data) == (Turn('{"name": "f", "arguments": "{bad"}', "done"),)


async def test_the_engine_continues_the_tau_bench_trajectory():
    history = history_from_tau_bench(TAU)
    names = sorted({json.loads(t.action)["name"] for t in history})
    tools = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in names]
    world = World(domain="mcp", title="Airline", extras={"tools": tools})
    action = json.dumps({"name": "get_user_details", "arguments": {"user_id": "mia_li_3668"}})
    backend = FakeBackend([answer('{"reservations": ["HATHAT"]}')])
    state = EpisodeState(world=world, task=TAU["info"]["task"]["instruction"], history=history)
    result = await step(state, action, backend)
    assert result.observation == '{"reservations": ["HATHAT"]}'
    assert backend.requests[0].messages[-2]["content"] == history[-1].observation
    assert state.advance(result).history[-1].action == action


def test_browsergym_history_pairs_each_action_with_the_next_tree():
    trees = browsergym_log_trees(WEBARENA_LOG)

    # Two actions, but only the first one's result (the second tree) is in the log.
    assert history_from_browsergym_log(WEBARENA_LOG) == (Turn('click("227")', trees[1]),)
    assert (
        browsergym_log_goal(WEBARENA_LOG) == "Tell me the total cost of my latest complete order?"
    )


def test_a_browsergym_log_without_trees_is_a_format_error():
    with pytest.raises(FormatError, match="accessibility tree"):
        history_from_browsergym_log("2024-11-06 - INFO - action:\n```noop()```")
    assert browsergym_log_goal("no goal here") == ""
