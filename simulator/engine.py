"""One episode step: action in, observation out.

:func:`step` validates the action, decides which perturbations fire, builds the
request (prompted instructions in the current user message), streams the world
model's answer (routing reasoning and observation deltas to ``on_delta``),
parses it, applies enforced perturbations, runs the domain's verifiers and
returns a :class:`~simulator.episode.StepResult`. It holds no state between calls.

The request is written in ``state.layout`` (``plain``, ``agentworld`` or, for the
embedded demo model, ``edit``; see :mod:`simulator.prompting`), with
``state.system_template`` as the system prompt when given in the agentworld
layout; in the first two each request extends the last.

Cancelling the task that awaits :func:`step` closes the backend stream at once
(generation stops) and the ``CancelledError`` propagates. Backend errors
propagate unchanged; an answer cut off by ``max_tokens``
(``finish_reason="length"``) before any observation raises
:class:`~simulator.errors.OutputCutOff`, any other answer with no observation
at all :class:`~simulator.errors.MalformedOutput`. A cut-off answer that has a
(partial) observation is returned, its ``finish_reason`` saying so. Enforced
latency is never slept: the simulated delay is recorded on its firing
(``simulated_delay_ms``).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

from simulator.backends.base import Backend, Chunk, ModelRequest
from simulator.domains.base import Action
from simulator.episode import Delta, EpisodeState, StepResult, Timings
from simulator.errors import MalformedOutput, OutputCutOff
from simulator.parsing import StreamSplitter, parse_output
from simulator.perturbations import (
    Perturbation,
    StepContext,
    enforce,
    firing_indexes,
    prompted_firings,
)
from simulator.prompting import build_messages, domain_for
from simulator.types import Usage
from simulator.verifiers import VerifierResult, run_verifiers

OnDelta = Callable[[Delta], Awaitable[None] | None]


async def _emit(
    on_delta: OnDelta | None, kind: Literal["reasoning", "observation"], text: str
) -> None:
    if on_delta is None or not text:
        return
    outcome = on_delta(Delta(kind, text))
    if inspect.isawaitable(outcome):
        await outcome


@asynccontextmanager
async def closing_stream(stream: AsyncIterator[Chunk]) -> AsyncIterator[AsyncIterator[Chunk]]:
    """Like ``contextlib.aclosing``, for any async iterator: ``aclose()`` it if it can.

    Closing on the way out (normal end, error or cancellation) is what stops
    generation on the server.
    """
    try:
        yield stream
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


@dataclass(frozen=True)
class Answer:
    """What one streamed model call returned: the content text unchanged, and its telemetry.

    ``reasoning`` is what the server sent as reasoning (``reasoning_content``);
    reasoning inside ``<think>`` tags is still in ``raw_output``.
    """

    raw_output: str
    reasoning: str
    usage: Usage
    finish_reason: str | None
    queued_s: float
    first_token_s: float | None

    def timings(self, started: float) -> Timings:
        return Timings(self.queued_s, self.first_token_s, time.monotonic() - started)


async def stream_answer(
    request: ModelRequest,
    backend: Backend,
    *,
    on_delta: OnDelta | None = None,
    started: float | None = None,
    outside: Literal["reasoning", "observation"] = "observation",
) -> Answer:
    """Stream one request, routing reasoning and observation deltas to ``on_delta`` live.

    Shared by :func:`step` and by re-simulation of recorded traces, so both stream,
    cancel and time a call the same way. ``started`` is when the step began;
    ``outside`` is where untagged content streams (see :class:`StreamSplitter`).
    """
    started = time.monotonic() if started is None else started
    splitter = StreamSplitter(outside)
    content: list[str] = []
    reasoning: list[str] = []
    usage = Usage()
    finish_reason: str | None = None
    first_token: float | None = None
    queued = time.monotonic() - started
    async with closing_stream(backend.stream(request)) as chunks:
        async for chunk in chunks:
            if chunk.kind in ("reasoning", "content") and first_token is None and chunk.text:
                first_token = time.monotonic() - started
            if chunk.kind == "reasoning":
                reasoning.append(chunk.text)
                await _emit(on_delta, "reasoning", chunk.text)
            elif chunk.kind == "content":
                content.append(chunk.text)
                live_reasoning, live_observation = splitter.feed(chunk.text)
                await _emit(on_delta, "reasoning", live_reasoning)
                await _emit(on_delta, "observation", live_observation)
            elif chunk.kind == "usage" and chunk.usage is not None:
                usage = chunk.usage
            elif chunk.kind == "finish":
                finish_reason = chunk.finish_reason
    live_reasoning, live_observation = splitter.finish()
    await _emit(on_delta, "reasoning", live_reasoning)
    await _emit(on_delta, "observation", live_observation)
    return Answer("".join(content), "".join(reasoning), usage, finish_reason, queued, first_token)


def verify(state: EpisodeState, action: Action, observation: str) -> tuple[VerifierResult, ...]:
    """The domain's rule verifiers on the observation the agent will see."""
    previous = state.history[-1].observation if state.history else state.world.initial_observation
    return tuple(
        run_verifiers(
            state.world.domain, observation, action=action, previous=previous, world=state.world
        )
    )


async def step(
    state: EpisodeState,
    action: str,
    backend: Backend,
    *,
    on_delta: OnDelta | None = None,
    extra_perturbations: Sequence[Perturbation] = (),
) -> StepResult:
    """Take one step; see the module docstring for the sequence and its errors."""
    started = time.monotonic()
    world = state.world
    parsed_action = domain_for(world).parse_action(action, world)  # InvalidAction: no call made

    perturbations = (*state.perturbations, *extra_perturbations)
    ctx = StepContext(step=state.next_step, action=action, domain=world.domain, seed=state.seed)
    indexes = firing_indexes(perturbations, ctx)
    prompted = prompted_firings(perturbations, indexes, ctx)
    messages = build_messages(
        world,
        state.history,
        action,
        instructions=[str(f.details["instruction"]) for f in prompted],
        task=state.task or None,
        layout=state.layout,
        system_template=state.system_template,
    )
    request = ModelRequest(messages=tuple(messages), sampling=state.sampling or world.sampling)
    # Told to think first, a Qwen-AgentWorld answer has only its observation in tags.
    outside: Literal["reasoning", "observation"] = (
        "reasoning" if state.layout == "agentworld" else "observation"
    )
    answer = await stream_answer(
        request, backend, on_delta=on_delta, started=started, outside=outside
    )
    raw_output = answer.raw_output
    finish_reason = answer.finish_reason
    parsed = parse_output(raw_output)
    if not parsed.observation.strip():
        if finish_reason == "length":
            raise OutputCutOff(request.sampling.max_tokens, answer.usage.completion_tokens)
        raise MalformedOutput(
            f"no observation in the model's output ({len(raw_output)} chars, "
            f"finish_reason={finish_reason!r})"
        )
    observation, enforced = enforce(perturbations, indexes, parsed.observation, ctx)
    verifiers = verify(state, parsed_action, observation)
    all_reasoning = "\n\n".join(part for part in (answer.reasoning, parsed.reasoning) if part)
    return StepResult(
        action=action,
        observation=observation,
        reasoning=all_reasoning,
        raw_output=raw_output,
        messages=request.messages,
        firings=(*prompted, *enforced),
        verifiers=verifiers,
        timings=answer.timings(started),
        usage=answer.usage,
        finish_reason=finish_reason,
        notes=parsed.notes,
    )
