"""Replay (recorded observations) and scripted (given outputs) backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.backends import ModelRequest, ReplayBackend, ScriptedBackend
from simulator.errors import BackendError, FormatError
from simulator.types import Message, Sampling

AWB = Path(__file__).parents[2] / "fixtures" / "agentworldbench" / "synthetic_terminal.jsonl"


def request_for_turn(turn: int, max_tokens: int = 2048) -> ModelRequest:
    messages: list[Message] = [{"role": "system", "content": "world"}]
    for k in range(1, turn + 1):
        messages.append({"role": "user", "content": f"action {k}"})
        if k < turn:
            messages.append({"role": "assistant", "content": f"observation {k}"})
    return ModelRequest(messages=tuple(messages), sampling=Sampling(max_tokens=max_tokens))


async def text_of(backend, request: ModelRequest, kind: str = "content") -> str:
    return "".join([c.text async for c in backend.stream(request) if c.kind == kind])


async def test_turn_k_gets_observation_k_whatever_the_order():
    backend = ReplayBackend(["first", "second", "third"], chunk_size=3)
    assert (
        await text_of(backend, request_for_turn(3))
        == "<predicted_observation>third</predicted_observation>"
    )
    assert (
        await text_of(backend, request_for_turn(1))
        == "<predicted_observation>first</predicted_observation>"
    )


async def test_awb_rows_replay_response_last_of_each_turn():
    rows = [json.loads(line) for line in AWB.read_text().splitlines()]
    backend = ReplayBackend.from_awb_rows(reversed(rows))
    assert backend.recorded_observations() == [row["response"][-1] for row in rows]
    from_file = ReplayBackend.from_jsonl(AWB)
    assert await text_of(from_file, request_for_turn(2)) == (
        f"<predicted_observation>{rows[1]['response'][-1]}</predicted_observation>"
    )


def test_observation_lines_are_read_in_order(tmp_path):
    path = tmp_path / "obs.jsonl"
    path.write_text('{"observation": "a"}\n\n{"observation": "b"}\n')
    assert ReplayBackend.from_jsonl(path).recorded_observations() == ["a", "b"]


@pytest.mark.parametrize(
    ("content", "line"),
    [("not json\n", 1), ('{"observation": "a"}\n[1]\n', 2), ('{"observation": 3}\n', 1)],
)
def test_bad_lines_name_their_line(tmp_path, content, line):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(FormatError) as caught:
        ReplayBackend.from_jsonl(path)
    assert caught.value.line == line


def test_rows_of_several_episodes_need_an_episode_id():
    rows = [
        {"id": 1, "turn_idx": 1, "response": ["a"]},
        {"id": 2, "turn_idx": 1, "response": ["b"]},
    ]
    with pytest.raises(FormatError):
        ReplayBackend.from_awb_rows(rows)
    assert ReplayBackend.from_awb_rows(rows, episode_id=2).recorded_observations() == ["b"]


def test_a_missing_turn_is_a_format_error():
    with pytest.raises(FormatError, match="turns missing"):
        ReplayBackend.from_awb_rows([{"id": 1, "turn_idx": 2, "response": ["a", "b"]}])


async def test_a_turn_beyond_the_recording_is_a_backend_error():
    with pytest.raises(BackendError, match="none for turn 2"):
        await text_of(ReplayBackend(["only"]), request_for_turn(2))


async def test_a_callable_chooses_the_observation_and_reasoning_streams_first():
    backend = ReplayBackend(
        lambda request: request.messages[-1]["content"].upper(), reasoning=["why"]
    )
    chunks = [c async for c in backend.stream(request_for_turn(1))]
    assert chunks[0].kind == "reasoning" and chunks[0].text == "why"
    assert (
        await text_of(backend, request_for_turn(1))
        == "<predicted_observation>ACTION 1</predicted_observation>"
    )
    with pytest.raises(TypeError):
        backend.recorded_observations()


async def test_scripted_cycles_its_outputs_and_keeps_the_requests():
    backend = ScriptedBackend(["one", "two"], reasoning=["r1", "r2"], chunk_size=2)
    texts = [await text_of(backend, request_for_turn(k)) for k in (1, 2, 3)]
    assert texts == ["one", "two", "one"]
    assert [len(r.messages) for r in backend.requests] == [2, 4, 6]
    assert await text_of(backend, request_for_turn(1), "reasoning") == "r2"


async def test_scripted_truncates_at_max_tokens():
    backend = ScriptedBackend(["abcdefgh"], chunk_size=2)
    chunks = [c async for c in backend.stream(request_for_turn(1, max_tokens=3))]
    assert "".join(c.text for c in chunks if c.kind == "content") == "abcdef"
    assert chunks[-1].finish_reason == "length"


def test_scripted_refuses_mismatched_reasoning():
    with pytest.raises(ValueError):
        ScriptedBackend(["a", "b"], reasoning=["only one"])
