"""Re-simulating a recorded trace: eval.py's request per row, its extraction, never a refusal."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.backends.scripted import ScriptedBackend
from simulator.formats.awb import AwbRow
from simulator.perturbations import Perturbation
from simulator.review.awb_eval import RecordedTurn, simulate_trace
from simulator.types import EVAL_SAMPLING
from simulator.world import World

SYSTEM = "You simulate a terminal. (test prompt)"
TEXTS = ["### Turn 1\n**Action:**\n```json\n[1]\n```", "### Turn 2\n**Action:**\n```json\n[2]\n```"]
ROW: dict[str, Any] = {
    "task": "terminal",
    "id": 1,
    "prompt": [TEXTS[0], TEXTS[1] + "\n\nAnswer in tags."],
    "response": [
        "**Environment Observation:**\nreal one",
        "**Environment Observation:**\nreal two",
    ],
    "current_prompt": TEXTS[1],
    "system_str": SYSTEM,
    "turn_idx": 2,
    "total_turns": 2,
}
WORLD = World(domain="terminal", title="box")
TURNS = [RecordedTurn("[1]", "real one"), RecordedTurn("[2]", "real two")]

# (raw model output, what eval.py's output parser extracts from it)
TRICKY = [
    ("<THINK>plan</Think><predicted_observation> a </predicted_observation>", "a"),
    ("<predicted_observation>draft</predicted_observation>\n<PREDICTED_OBSERVATION>final", "final"),
    ("thinking only</think>\n  plain answer  ", "plain answer"),
    ("<think>unclosed <predicted_observation>kept</predicted_observation>", "kept"),
    (
        "<think>a<think>b</think>c</think><predicted_observation>x</predicted_observation>",
        "x",
    ),
    ("<predicted_observation>  \n ", ""),
    ("<think>only thinking</think>", "No output"),
    ("a<predicted_observation>b<think>c</think>d</predicted_observation>", "bd"),
]


async def resimulate(outputs, **options):
    backend = ScriptedBackend(outputs)
    rows = [AwbRow(ROW).for_turn(1), AwbRow(ROW).for_turn(2)]
    results = await simulate_trace(WORLD, TURNS, backend, rows=rows, **options)
    return backend, results


async def test_each_request_is_the_rows_eval_py_request_with_eval_sampling():
    backend, results = await resimulate(["<predicted_observation>o</predicted_observation>"])
    first, second = (list(r.messages) for r in backend.requests)
    assert first == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TEXTS[0] + "\n\nAnswer in tags."},
    ]
    assert second == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TEXTS[0]},
        {"role": "assistant", "content": ROW["response"][0]},
        {"role": "user", "content": ROW["prompt"][1]},
    ]
    assert all(r.sampling == EVAL_SAMPLING for r in backend.requests)
    assert [r.result.observation for r in results if r.result] == ["o", "o"]


@pytest.mark.parametrize(("raw", "expected"), TRICKY)
async def test_the_observation_is_extracted_as_eval_py_does(raw, expected):
    _, results = await resimulate([raw])
    assert results[0].result is not None
    assert results[0].result.observation == expected
    assert results[0].result.raw_output == raw


async def test_reasoning_is_kept_and_free_running_feeds_back_the_simulated_history():
    backend, results = await resimulate(
        ["<think>why</think><predicted_observation>sim</predicted_observation>"],
        mode="free_running",
    )
    assert results[0].result is not None and results[0].result.reasoning == "why"
    assert backend.requests[1].messages[2]["content"] == "**Environment Observation:**\nsim"


async def test_prompted_perturbations_add_to_the_current_turn_only():
    control = Perturbation.from_dict(
        {
            "kind": "instruction",
            "params": {"text": "The disk is full."},
            "trigger": {"first_step": 2},
        }
    )
    backend, _ = await resimulate(
        ["<predicted_observation>o</predicted_observation>"], perturbations=[control]
    )
    assert "The disk is full." not in backend.requests[0].messages[-1]["content"]
    last = str(backend.requests[1].messages[-1]["content"])
    assert last.startswith(str(ROW["prompt"][1])) and "The disk is full." in last


async def test_an_action_the_studio_cannot_parse_is_sent_anyway_with_a_note():
    world = World(domain="android", title="phone")
    turns = [RecordedTurn("swipe the thing somewhere", "<hierarchy/>")]
    backend = ScriptedBackend(["<predicted_observation><hierarchy/></predicted_observation>"])
    (result,) = await simulate_trace(world, turns, backend)
    assert result.result is not None and result.error == ""
    assert backend.requests[0].messages[-1]["content"] == "swipe the thing somewhere"
    assert result.action_notes


async def test_a_turn_cut_off_by_max_tokens_is_cut_off_not_malformed():
    from simulator.types import Sampling

    _, results = await resimulate(
        [
            "<think>"
            + "a long thought " * 50
            + "</think><predicted_observation>x</predicted_observation>"
        ],
        sampling=Sampling(max_tokens=8),
    )
    assert results[0].result is None
    assert results[0].error_kind == "OutputCutOff"
    assert results[0].error.startswith("cut off (max_tokens 8)")
