"""Running one step as a coroutine on the process's step loop (studio/lib/step_loop.py).

The engine streams the world model's answer; deltas are coalesced (at most one
group message every ``COALESCE_S``, reasoning and observation together, each with
a sequence number) so a fast model never floods the channel layer, whose group
sends are at-most-once. The text sent so far is flushed to ``Step.partial_*``
about once a second, so a browser that (re)connects mid-step catches up from the
database; the same tick polls the step's cancel flag. Database calls run on one
threads of their own (Django connections are per thread) and never block the loop.
The model call itself waits for a slot of its endpoint (``endpoint_slot``), so what
caps the calls in flight is the model server's size, not the number of workers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any, TypeVar

from channels.layers import get_channel_layer
from django.conf import settings
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from simulator import engine
from simulator.backends.local import EMBEDDED_TUNING, max_new_tokens
from simulator.episode import Delta, EpisodeState, StepResult
from simulator.errors import BackendError, MalformedOutput
from simulator.perturbations import Perturbation
from simulator.scenario import SuccessCriterion, evaluate_success
from studio.core.endpoints import in_flight_limit, is_demo_model
from studio.episodes.models import Episode, EpisodeStatus, RunStatus, Step, StepStatus
from studio.episodes.rewards import scenario_rules
from studio.episodes.selectors import backend_spec, episode_state
from studio.episodes.services import step_messages
from studio.lib import stream_buffer
from studio.lib.channels import DELTA
from studio.lib.compiled import CompiledQuery, CompiledUpdate
from studio.lib.step_loop import backend_for, endpoint_slot, run_db
from studio.lib.tasks import dispatch

logger = logging.getLogger(__name__)
T = TypeVar("T")

COALESCE_S = 0.04  # at most 25 delta messages a second per step
FLUSH_S = 1.0  # partial text to the database, and the cancel flag polled
STEP_TIMEOUT_S = float(getattr(settings, "EPISODE_STEP_TIMEOUT_S", 540))


class _Stream:
    """Coalesces deltas and remembers exactly what was sent, with its sequence number."""

    def __init__(self, layer: Any, group: str, step: Step) -> None:
        self.layer = layer
        self.group = group
        self.step = step
        #: Whether anything went to the stream buffer (studio/lib/stream_buffer.py).
        self.buffered = False
        self.seq = step.partial_seq
        self.pending = {"reasoning": "", "observation": ""}
        self.sent = {"reasoning": step.partial_reasoning, "observation": step.partial_observation}
        self.messages = 0

    def add(self, delta: Delta) -> None:
        self.pending[delta.kind] += delta.text

    async def send(self) -> None:
        if not any(self.pending.values()) or self.layer is None:
            return
        self.seq += 1
        self.buffered = True
        await stream_buffer.append(
            self.step.pk, self.seq, self.pending["reasoning"], self.pending["observation"]
        )
        message = {
            "type": DELTA,
            "step_id": self.step.pk,
            "index": self.step.index,
            "seq": self.seq,
            **self.pending,
        }
        for kind, text in self.pending.items():
            self.sent[kind] += text
        self.pending = {"reasoning": "", "observation": ""}
        self.messages += 1
        await self.layer.group_send(self.group, message)


@CompiledUpdate
def _claim(step_id: int, now: datetime, stale: datetime) -> tuple[QuerySet[Step], dict[str, Any]]:
    abandoned = Q(status=StepStatus.RUNNING, started_at__lt=stale)
    return Step.objects.filter(Q(status=StepStatus.PENDING) | abandoned, pk=step_id), {
        "status": StepStatus.RUNNING,
        "started_at": now,
        "attempts": F("attempts") + 1,
        "cancel_requested": False,
        "partial_observation": "",
        "partial_reasoning": "",
        "partial_seq": 0,
    }


def claim_step(step_id: int) -> bool:
    """pending -> running, in one conditional UPDATE; False when someone else has it.

    A step still ``running`` after the task time limit was claimed by a worker that
    died (a living one is killed at that limit): a redelivered task takes it over,
    so a SIGKILLed worker's step runs again instead of staying ``running`` forever.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    return _claim.run(step_id, now, stale) == 1


@CompiledQuery
def _step_to_run(step_id: int) -> QuerySet[Step]:
    """A step with what running it needs: its episode's world, endpoint and scenario."""
    return Step.objects.select_related(
        "episode__world_revision", "episode__endpoint", "episode__scenario"
    ).filter(pk=step_id)


@CompiledQuery
def _agent_running(episode_id: int) -> QuerySet[Episode, tuple[int]]:
    return Episode.objects.filter(pk=episode_id, run_status=RunStatus.RUNNING).values_list("pk")


#: What running a step needs, read with its claim: the step, the episode's state
#: before it, the backend spec, the scenario's success criteria and the endpoint's
#: in-flight limit.
_Loaded = tuple[Step, EpisodeState, dict[str, Any], tuple[SuccessCriterion, ...], int]


async def claim_and_run(step_id: int) -> None:
    """Run step ``step_id`` if this call claims it (a second delivery finds it taken)."""
    await StepRun(step_id).run()


class StepRun:
    def __init__(self, step_id: int) -> None:
        self.step_id = step_id
        #: How the request was made, kept with the step whatever its outcome, so its
        #: page can say which layout the model saw and what a cut-off ran into.
        self.request_telemetry: dict[str, Any] = {}
        #: Its stream, once it has one: what it wrote to the stream buffer is dropped at the end.
        self.stream: _Stream | None = None

    async def db(self, function: Callable[..., T], *args: Any) -> T:
        return await run_db(function, *args)

    def _claim_and_load(self) -> _Loaded | None:
        """Claim the step and read what running it needs, in one trip to a database
        thread (each trip costs the worker's loop a thread handoff); None when another
        delivery has it."""
        if not claim_step(self.step_id):
            return None
        step = _step_to_run.get(self.step_id)
        episode = step.episode
        state = episode_state(episode, before=step.index)
        criteria = scenario_rules(episode.scenario).criteria
        return step, state, backend_spec(episode), criteria, in_flight_limit(episode.endpoint)

    async def run(self) -> None:
        try:
            await self._run()
        finally:  # the row now holds whatever was streamed
            if self.stream is not None and self.stream.buffered:
                await stream_buffer.discard(self.step_id)

    async def _run(self) -> None:
        loaded = await self.db(self._claim_and_load)
        if loaded is None:
            return
        step, state, spec, criteria, limit = loaded
        sampling = state.sampling or state.world.sampling
        demo = is_demo_model(spec)
        self.request_telemetry = {
            "prompt_layout": state.layout,
            # The embedded model's own cap, when it is lower, is what a cut-off ran into.
            "max_tokens": max_new_tokens(sampling, EMBEDDED_TUNING)
            if demo
            else sampling.max_tokens,
            # The step's page puts a "demo model" note next to what the embedded model wrote.
            "demo_model": demo,
        }
        if step.attempts > 1:  # an earlier attempt's worker may have died mid-stream
            await stream_buffer.discard(step.pk)
        layer = get_channel_layer()
        stream = self.stream = _Stream(layer, step.episode.group_name, step)
        await self._publish(layer, step, final=False)  # now "running" on every page
        extras = tuple(Perturbation.from_dict(p) for p in step.extra_perturbations)
        started = time.monotonic()
        try:
            backend, shared = backend_for(spec)
        except ValueError as exc:
            await self._fail(layer, step, stream, "config", str(exc))
            return
        slot = endpoint_slot(str(step.episode.endpoint_id or "default"), limit)

        async def call_model() -> StepResult:
            async with slot:
                return await engine.step(
                    state, step.action, backend, on_delta=stream.add, extra_perturbations=extras
                )

        work = asyncio.create_task(call_model())
        cancelled = timed_out = False
        last_flush = time.monotonic()
        try:
            while not work.done():
                await asyncio.wait({work}, timeout=COALESCE_S)
                await stream.send()
                now = time.monotonic()
                if now - last_flush >= FLUSH_S and not work.done():
                    last_flush = now
                    if await self.db(self._flush, stream.sent, stream.seq):
                        cancelled = True
                        work.cancel()
                if now - started > STEP_TIMEOUT_S and not work.done():
                    timed_out = True
                    work.cancel()
            await stream.send()
            result = work.result()
        except asyncio.CancelledError:
            if cancelled:
                await self._finish_cancelled(layer, step, stream)
                return
            if timed_out:
                await self._fail(layer, step, stream, "timeout", "the step took too long")
                return
            raise
        except (BackendError, MalformedOutput) as exc:
            await self._fail(layer, step, stream, type(exc).__name__, str(exc))
            return
        except Exception as exc:  # a bug or an unexpected backend failure: shown, retryable
            logger.exception("step %s failed", self.step_id)
            await self._fail(layer, step, stream, type(exc).__name__, str(exc))
            return
        finally:
            if not shared:
                await _close(backend)
        await self.db(self._save_result, result, criteria, stream, step.episode_id)
        await self._publish(layer, step, seq=stream.seq)

    def _flush(self, sent: dict[str, str], seq: int) -> bool:
        """Store the stream so far; True when the step was asked to stop."""
        Step.objects.filter(pk=self.step_id, status=StepStatus.RUNNING).update(
            partial_observation=sent["observation"],
            partial_reasoning=sent["reasoning"],
            partial_seq=seq,
        )
        return Step.objects.filter(pk=self.step_id, cancel_requested=True).exists()

    def _save_result(
        self,
        result: StepResult,
        criteria: tuple[SuccessCriterion, ...],
        stream: _Stream,
        episode_id: int,
    ) -> None:
        """Store the result and end the episode or let its agent go on, in one trip."""
        outcome = evaluate_success(criteria, result.observation)
        telemetry: dict[str, Any] = {
            **self.request_telemetry,
            **result.timings.to_dict(),
            **asdict(result.usage),
            "finish_reason": result.finish_reason,
            "notes": list(result.notes),
            "ws_messages": stream.messages,
            "outcome": outcome.reason,
        }
        Step.objects.filter(pk=self.step_id, status=StepStatus.RUNNING).update(
            status=StepStatus.DONE,
            observation=result.observation,
            reasoning=result.reasoning,
            raw_output=result.raw_output,
            firings=[f.to_dict() for f in result.firings],
            verifiers=[v.to_dict() for v in result.verifiers],
            telemetry=telemetry,
            reward=outcome.reward,
            terminated=outcome.terminated,
            partial_observation=stream.sent["observation"],
            partial_reasoning=stream.sent["reasoning"],
            partial_seq=stream.seq,
            finished_at=timezone.now(),
        )
        if outcome.terminated:
            Episode.objects.filter(pk=episode_id).update(
                status=EpisodeStatus.DONE, run_status=RunStatus.IDLE, run_remaining=0
            )
        else:
            self._continue_agent(episode_id)

    def _mark(self, status: str, kind: str, error: str, stream: _Stream) -> None:
        Step.objects.filter(pk=self.step_id, status=StepStatus.RUNNING).update(
            status=status,
            error=error[:4000],
            error_kind=kind[:60],
            telemetry=self.request_telemetry,
            partial_observation=stream.sent["observation"],
            partial_reasoning=stream.sent["reasoning"],
            partial_seq=stream.seq,
            finished_at=timezone.now(),
        )

    async def _fail(self, layer: Any, step: Step, stream: _Stream, kind: str, error: str) -> None:
        await self.db(self._mark, StepStatus.FAILED, kind, error or kind, stream)
        await self._publish(layer, step, seq=stream.seq)
        await self.db(self._pause_agent, step.episode_id)

    async def _finish_cancelled(self, layer: Any, step: Step, stream: _Stream) -> None:
        await self.db(self._mark, StepStatus.CANCELLED, "cancelled", "Stopped.", stream)
        await self._publish(layer, step, seq=stream.seq)

    def _pause_agent(self, episode_id: int) -> None:
        Episode.objects.filter(pk=episode_id, run_status=RunStatus.RUNNING).update(
            run_status=RunStatus.PAUSED
        )

    def _continue_agent(self, episode_id: int) -> None:
        # Read now, not with the step: the agent may have been started or stopped meanwhile.
        if _agent_running.first(episode_id) is not None:
            # A real cycle: the tasks module imports this one to run a claimed step.
            from studio.episodes.tasks import agent_step

            dispatch(agent_step, episode_id)

    async def _publish(self, layer: Any, step: Step, seq: int = 0, *, final: bool = True) -> None:
        """Tell the episode's pages to re-render the step; ``final``: it has ended (what
        an env API call waiting for the step wakes on)."""
        if layer is not None:
            for to, message in step_messages(step, seq, final=final):
                await layer.group_send(to, message)


async def _close(backend: Any) -> None:
    try:
        await backend.aclose()
    except Exception:  # closing is best effort; the step's outcome is already decided
        logger.debug("closing the backend failed", exc_info=True)
