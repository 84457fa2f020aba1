from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from simulator.backends.base import Chunk, ModelRequest
from simulator.engine import step
from simulator.episode import Delta, EpisodeState, StepResult, Turn
from simulator.errors import (
    BackendError,
    BackendRateLimited,
    InvalidAction,
    MalformedOutput,
    OutputCutOff,
    StreamInterrupted,
)
from simulator.perturbations import Perturbation, Trigger
from simulator.prompting import CONTROL_OPEN
from simulator.types import Sampling, Usage
from tests.unit.engine.fakes import FakeBackend, answer, make_world


def state(**kwargs) -> EpisodeState:
    return EpisodeState(world=make_world(), **kwargs)


async def test_it_steps_and_streams_reasoning_and_observation_apart():
    deltas: list[Delta] = []
    backend = FakeBackend([answer("file.txt", reasoning="list the dir")])
    result = await step(state(task="Find files."), "ls", backend, on_delta=deltas.append)
    assert result.observation == "file.txt" and result.reasoning == "list the dir"
    assert result.raw_output == "<predicted_observation>file.txt</predicted_observation>"
    assert "".join(d.text for d in deltas if d.kind == "observation") == "file.txt"
    assert "".join(d.text for d in deltas if d.kind == "reasoning") == "list the dir"
    assert result.usage == Usage(prompt_tokens=10, completion_tokens=5)
    assert result.finish_reason == "stop"
    assert result.messages == backend.requests[0].messages
    assert result.messages[0]["content"].endswith("Find files.")
    assert (
        result.timings.done_s >= (result.timings.first_token_s or 0) >= result.timings.queued_s >= 0
    )
    assert {v.name for v in result.verifiers}  # the domain's rule verifiers ran


async def test_think_tags_in_content_are_streamed_as_reasoning_with_async_callbacks():
    seen: list[Delta] = []

    async def on_delta(delta: Delta) -> None:
        seen.append(delta)

    content = "<think>hmm</think><predicted_observation>ok</predicted_observation>"
    backend = FakeBackend(
        [
            [
                Chunk("content", content[:9]),
                Chunk("content", content[9:]),
                Chunk("finish", finish_reason="stop"),
            ]
        ]
    )
    result = await step(state(), "ls", backend, on_delta=on_delta)
    assert result.reasoning == "hmm" and result.observation == "ok"
    assert [d.kind for d in seen] == ["reasoning", "reasoning", "observation"]
    assert "".join(d.text for d in seen[:2]) == "hmm" and seen[2].text == "ok"


async def test_an_invalid_action_is_refused_before_the_backend_is_called():
    backend = FakeBackend()
    with pytest.raises(InvalidAction):
        await step(state(), "   ", backend)
    assert backend.requests == []


async def test_an_answer_without_observation_is_malformed():
    backend = FakeBackend(
        [[Chunk("content", "<think>only thoughts</think>"), Chunk("finish", finish_reason="stop")]]
    )
    with pytest.raises(MalformedOutput, match="finish_reason='stop'"):
        await step(state(), "ls", backend)


async def test_an_answer_cut_off_before_its_observation_is_a_retryable_cut_off():
    backend = FakeBackend(
        [
            [
                Chunk("content", "<think>never finished"),
                Chunk("usage", usage=Usage(completion_tokens=300)),
                Chunk("finish", finish_reason="length"),
            ]
        ]
    )
    with pytest.raises(OutputCutOff) as caught:
        await step(replace(state(), sampling=Sampling(max_tokens=300)), "ls", backend)
    assert isinstance(caught.value, BackendError) and not isinstance(caught.value, MalformedOutput)
    assert caught.value.max_tokens == 300
    assert str(caught.value).startswith("cut off (max_tokens 300): the model stopped after 300")


async def test_an_answer_cut_off_inside_its_observation_keeps_the_partial_observation():
    backend = FakeBackend(
        [
            [
                Chunk("reasoning", "thinking"),
                Chunk("content", "<predicted_observation>total 8\ndrwx"),
                Chunk("finish", finish_reason="length"),
            ]
        ]
    )
    result = await step(state(), "ls", backend)
    assert result.observation == "total 8\ndrwx" and result.finish_reason == "length"


@pytest.mark.parametrize("error", [BackendRateLimited(429, "slow down"), StreamInterrupted("cut")])
async def test_backend_errors_propagate_unchanged_and_the_stream_is_closed(error):
    class Failing(FakeBackend):
        async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
            try:
                yield Chunk("content", "<predicted_observation>par")
                raise error
            finally:
                self.closed_streams += 1

    backend = Failing()
    with pytest.raises(type(error)) as caught:
        await step(state(), "ls", backend)
    assert caught.value is error and backend.closed_streams == 1


async def test_cancelling_the_step_closes_the_backend_stream():
    started = asyncio.Event()

    class Endless(FakeBackend):
        async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
            try:
                while True:
                    started.set()
                    yield Chunk("content", "x")
                    await asyncio.sleep(0.001)
            finally:
                self.closed_streams += 1

    backend = Endless()
    task = asyncio.create_task(step(state(), "ls", backend))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert backend.closed_streams == 1


async def test_a_stream_without_aclose_is_still_consumed():
    class PlainIterator:
        def __init__(self) -> None:
            self._chunks = iter(answer("plain"))

        def __aiter__(self):
            return self

        async def __anext__(self) -> Chunk:
            try:
                return next(self._chunks)
            except StopIteration:
                raise StopAsyncIteration from None

    class Plain(FakeBackend):
        def stream(self, request):
            return PlainIterator()

    assert (await step(state(), "ls", Plain())).observation == "plain"


async def test_perturbations_fire_prompted_into_the_request_and_enforced_onto_the_observation():
    perturbations = (
        Perturbation("instruction", "prompted", {"text": "Mention a warning."}),
        Perturbation("truncation", "enforced", {"max_chars": 4}),
        Perturbation("error_injection", "enforced", trigger=Trigger(first_step=5)),
    )
    backend = FakeBackend([answer("0123456789")])
    result = await step(state(perturbations=perturbations), "ls", backend)
    assert result.observation == "0123\n[... 6 characters truncated ...]"
    assert "- Mention a warning." in result.messages[-1]["content"]
    assert [(f.index, f.kind, f.mode) for f in result.firings] == [
        (0, "instruction", "prompted"),
        (1, "truncation", "enforced"),
    ]
    assert result.firings[1].details["chars_before"] == 10


async def test_extra_perturbations_apply_to_this_step_only():
    backend = FakeBackend([answer("a"), answer("b")])
    s = state()
    first = await step(
        s,
        "ls",
        backend,
        extra_perturbations=[Perturbation("instruction", params={"text": "Once."})],
    )
    second = await step(s.advance(first), "ls", backend)
    assert CONTROL_OPEN in first.messages[-1]["content"]
    assert CONTROL_OPEN not in second.messages[-1]["content"] and second.firings == ()


async def test_sampling_comes_from_the_state_or_else_the_world():
    backend = FakeBackend([answer("a"), answer("b")])
    await step(state(), "ls", backend)
    await step(state(sampling=Sampling(temperature=0.0, seed=1)), "ls", backend)
    assert backend.requests[0].sampling == Sampling()
    assert backend.requests[1].sampling == Sampling(temperature=0.0, seed=1)


async def test_advance_appends_the_turn_as_the_agent_saw_it():
    s = state(perturbations=(Perturbation("truncation", "enforced", {"max_chars": 2}),))
    result = await step(s, "ls", FakeBackend([answer("abcdef")]))
    after = s.advance(result)
    assert after.history == (Turn("ls", result.observation),) and after.next_step == 2
    assert s.history == ()


async def test_step_result_round_trips_through_json():
    perturbations = (Perturbation("latency", "enforced", {"delay_ms": 10}),)
    result = await step(state(perturbations=perturbations), "ls", FakeBackend([answer("x", "why")]))
    data = json.loads(json.dumps(result.to_dict()))
    assert StepResult.from_dict(data) == result
    assert StepResult.from_dict(data).to_dict() == result.to_dict()
