"""AgentWorldBench's three evaluation steps, compatible with Qwen-AgentWorld's ``eval.py``.

- **infer**: each row's request is the system prompt (``system_str``), the earlier
  turns as user (``prompt[i]``) / assistant (``response[i]``) pairs and then the
  current turn's prompt ``prompt[turn_idx - 1]``; the model's content text is added
  to the row as ``gen`` (``""`` when the call fails).
- **judge**: :func:`simulator.review.judge.judge_row` adds ``total_score`` (1–5), the five
  dimension scores, ``failed``, ``strengths``, ``weaknesses``, ``extracted_output``
  and ``judge_raw_output``.
- **score**: :func:`aggregate` groups rows by domain, keeps rows with
  ``failed == 0``, averages each dimension's non-zero values and maps the mean to
  0–100 with ``(mean - 1) / 4 * 100``; the overall score is the mean over every
  valid row's ``total_score`` (not the mean of the domains). :func:`format_report`
  prints it exactly as ``eval.py score`` does.

:func:`~simulator.formats.awb.load_data` reads a benchmark folder as ``eval.py infer --data-dir`` does.
:func:`run_rows` runs infer or judge over many rows at once (an asyncio
semaphore bounds concurrency), appending each finished row to the output file so
an interrupted run can resume where it stopped (rows are keyed by task, id and
turn_idx, and a saved row is reused only if it still carries the input row's
fields unchanged).
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import mean
from typing import IO, Any

from simulator.awb_turns import render_observation
from simulator.backends.base import Backend, ModelRequest
from simulator.chat_client import ChatClient
from simulator.domains import get_domain
from simulator.domains.base import Action, Domain
from simulator.engine import stream_answer
from simulator.episode import StepResult, Turn
from simulator.errors import MalformedOutput, OutputCutOff, SimulatorError
from simulator.formats.awb import dump_row, id_key, infer_messages
from simulator.formats.awb import load_data as load_data
from simulator.formats.awb import read_rows as read_rows
from simulator.parsing import split_reasoning
from simulator.perturbations import Perturbation, enforce, firing_indexes, prompted_firings
from simulator.perturbations.spec import StepContext
from simulator.prompting import build_messages, with_instructions
from simulator.review.judge import (
    DIMENSIONS,
    NO_OUTPUT,
    ask,
    domain_of,
    extract_observation,
    normalize,
)
from simulator.types import EVAL_SAMPLING, Message, Sampling
from simulator.verifiers import VerifierResult, run_verifiers
from simulator.world import World

#: eval.py's defaults for both infer and judge.
DEFAULT_SAMPLING = EVAL_SAMPLING
DISPLAY_NAMES = {
    "mcp": "MCP",
    "search": "Search",
    "terminal": "Terminal",
    "swe": "SWE",
    "android": "Android",
    "web": "Web",
    "os": "OS",
}

RowKey = tuple[str, str, int]
Checks = tuple[VerifierResult, ...]


def row_key(row: Mapping[str, Any]) -> RowKey:
    """(task, id, turn_idx): what identifies a row across infer, judge and resume."""
    return (str(row.get("task", "")), id_key(row.get("id")), int(row.get("turn_idx", 0)))


async def infer_row(
    backend: Backend | ChatClient, row: Mapping[str, Any], sampling: Sampling = DEFAULT_SAMPLING
) -> dict[str, Any]:
    """``row`` plus ``gen``: the world model's content text, or ``""`` if the call failed."""
    out = dict(row)
    try:
        out["gen"] = await ask(backend, infer_messages(row), sampling)
    except Exception:  # eval.py keeps going with an empty generation
        out["gen"] = ""
    return out


# ── Running many rows ───────────────────────────────────────────────────────────


def _carries(saved: Mapping[str, Any], row: Mapping[str, Any]) -> bool:
    """Whether ``saved`` is ``row`` plus the step's own fields (e.g. the same ``gen``)."""
    return all(key in saved and saved[key] == value for key, value in row.items())


class Progress:
    """A one-line progress display on stderr (rewritten in place)."""

    def __init__(self, label: str, total: int, stream: IO[str] | None = None) -> None:
        self.label, self.total, self.done = label, total, 0
        self.stream = stream if stream is not None else sys.stderr
        self.started = time.monotonic()

    def advance(self) -> None:
        self.done += 1
        elapsed = max(time.monotonic() - self.started, 1e-9)
        percent = 100 * self.done / self.total if self.total else 100
        self.stream.write(
            f"\r{self.label}: {self.done}/{self.total} ({percent:.0f}%) "
            f"{self.done / elapsed:.1f} rows/s"
        )
        if self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


@dataclass
class RunSummary:
    """What :func:`run_rows` did."""

    total: int
    skipped: int
    done: int
    seconds: float
    rows: list[dict[str, Any]] = field(default_factory=list)


async def run_rows(
    rows: Sequence[Mapping[str, Any]],
    work: Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]],
    *,
    output: str | Path,
    concurrency: int = 8,
    label: str = "rows",
    progress: IO[str] | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    resume: bool = True,
) -> RunSummary:
    """Apply ``work`` to each row not yet in ``output``, ``concurrency`` at a time.

    Each finished row is appended to ``output`` at once (so a crash loses nothing);
    when the run completes the file is rewritten in input order. With ``resume``
    a row already saved in ``output`` (same key, same input fields) is kept and
    not sent again; without it ``output`` starts empty.
    """
    started = time.monotonic()
    out_path = Path(output)
    existing: dict[RowKey, dict[str, Any]] = {}
    if resume and out_path.exists():
        saved = {row_key(r): r for r in read_rows(out_path)}
        existing = {
            row_key(r): saved[row_key(r)]
            for r in rows
            if row_key(r) in saved and _carries(saved[row_key(r)], r)
        }
    pending = [r for r in rows if row_key(r) not in existing]
    meter = Progress(label, len(pending), progress)
    semaphore = asyncio.Semaphore(max(1, concurrency))
    results: dict[RowKey, dict[str, Any]] = dict(existing)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open(out_path, "a" if existing else "w", encoding="utf-8") as sink:

        async def one(row: Mapping[str, Any]) -> None:
            async with semaphore:
                result = await work(row)
            results[row_key(row)] = result
            sink.write(dump_row(result) + "\n")
            sink.flush()
            if on_row is not None:
                on_row(result)
            meter.advance()

        await asyncio.gather(*(one(r) for r in pending))
    ordered = [results[row_key(r)] for r in rows if row_key(r) in results]
    with open(out_path, "w", encoding="utf-8") as sink:
        for row in ordered:
            sink.write(dump_row(row) + "\n")
    return RunSummary(
        total=len(rows),
        skipped=len(rows) - len(pending),
        done=len(pending),
        seconds=time.monotonic() - started,
        rows=ordered,
    )


# ── Score aggregation ───────────────────────────────────────────────────────────


@dataclass(frozen=True)
class DomainScores:
    """One domain's line of the report; ``scores`` are on 0–100 (empty when no valid row)."""

    domain: str
    rows: int
    valid: int
    scores: Mapping[str, float]

    @property
    def failed(self) -> int:
        return self.rows - self.valid

    @property
    def display_name(self) -> str:
        return DISPLAY_NAMES.get(self.domain, self.domain.capitalize())


@dataclass(frozen=True)
class Aggregate:
    """The whole report: per domain (sorted by name) and overall (None without valid rows)."""

    domains: tuple[DomainScores, ...]
    overall: float | None
    total_rows: int
    valid_totals: int


def _is_valid(row: Mapping[str, Any]) -> bool:
    return bool(row.get("failed", 1.0) == 0.0)


def aggregate(rows: Iterable[Mapping[str, Any]]) -> Aggregate:
    """Aggregate judged rows as ``eval.py score`` does (see the module docstring).

    A dimension whose valid rows all lack it (or hold 0) averages 0, which
    normalises to -25.0: ``eval.py`` prints that too.
    """
    by_domain: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    total_rows = 0
    for row in rows:
        by_domain[domain_of(str(row.get("task", "mcp")))].append(row)
        total_rows += 1
    domains, totals = [], []
    for domain in sorted(by_domain):
        valid = [r for r in by_domain[domain] if _is_valid(r)]
        scores: dict[str, float] = {}
        if valid:
            for name in (*DIMENSIONS, "total_score"):
                values = [r.get(name, 0) for r in valid if r.get(name, 0) != 0]
                scores[name] = normalize(mean(values) if values else 0.0)
                if name == "total_score":
                    totals.extend(values)
        domains.append(DomainScores(domain, len(by_domain[domain]), len(valid), scores))
    overall = normalize(mean(totals)) if totals else None
    return Aggregate(tuple(domains), overall, total_rows, len(totals))


def format_report(result: Aggregate) -> str:
    """The text ``eval.py score`` prints for ``result`` (two decimals, Python rounding)."""
    rule = "=" * 70
    lines = ["", rule, "AgentWorldBench Evaluation Results", rule]
    for domain in result.domains:
        lines += [
            "",
            f"--- {domain.display_name} ({domain.valid}/{domain.rows} valid, "
            f"{domain.failed} failed) ---",
        ]
        if not domain.scores:
            lines.append("  No valid results.")
            continue
        lines += [f"  {name:>15s}: {score:.2f}" for name, score in domain.scores.items()]
    if result.overall is not None:
        lines += [
            "",
            rule,
            f"Overall: {result.overall:.2f}",
            f"Total samples: {result.total_rows}, Valid: {result.valid_totals}, "
            f"Failed: {result.total_rows - result.valid_totals}",
            rule,
        ]
    return "\n".join(lines) + "\n"


# ── Simulating a recorded trace ─────────────────────────────────────────────────


@dataclass(frozen=True)
class RecordedTurn:
    """One turn of a recorded trace: the action as the agent sent it and the real observation."""

    action: str
    observation: str


@dataclass(frozen=True)
class SimulatedTurnResult:
    """One simulated turn: the engine's result, or the error that stopped it.

    ``action_notes`` say what the studio's parser could not validate in the
    recorded action (sent to the model all the same).
    """

    index: int
    result: StepResult | None
    error: str = ""
    error_kind: str = ""
    real_verifiers: tuple[VerifierResult, ...] = ()
    action_notes: tuple[str, ...] = ()


def _row_messages(
    row: Mapping[str, Any], index: int, simulated: Sequence[str] | None
) -> list[Message]:
    """eval.py's request for ``row``; free-running swaps in the simulated history."""
    if simulated is not None:
        row = {
            **row,
            "response": [
                *(render_observation(text) for text in simulated[: index - 1]),
                *row["response"][index - 1 :],
            ],
        }
    return infer_messages(row)


async def simulate_trace(
    world: World,
    turns: Sequence[RecordedTurn],
    backend: Backend,
    *,
    mode: str = "teacher_forced",
    perturbations: Sequence[Perturbation] = (),
    seed: int = 0,
    rows: Sequence[Mapping[str, Any]] | None = None,
    sampling: Sampling | None = None,
    on_turn: Callable[[SimulatedTurnResult], Awaitable[None] | None] | None = None,
) -> list[SimulatedTurnResult]:
    """Ask the world model for each turn of a recorded trace.

    ``teacher_forced``: each turn sees the real history (as AgentWorldBench scores
    it). ``free_running``: each turn sees the simulated history so far. With
    ``rows`` (``rows[k-1]`` is eval.py's row for turn k, from an imported file)
    each request is exactly the one eval.py sends for that row, and the answer is
    extracted exactly as eval.py's output parser does; otherwise the request is
    built from the world like a live step's. The recorded action is sent as it
    is: the studio's parser only reads it for verifiers and notes, and never
    refuses it. Sampling defaults to eval.py's (:data:`EVAL_SAMPLING`).
    Prompted perturbations add their control text to the current turn only;
    enforced ones transform the observation. Rule verifiers run on both the
    simulated and the real observation.
    """
    if mode not in ("teacher_forced", "free_running"):
        raise ValueError(f"unknown mode {mode!r}")
    domain = _known_domain(world.domain)
    simulated: list[str] = []
    results = []
    for index, turn in enumerate(turns, start=1):
        read = domain.read_action(turn.action, world) if domain is not None else None
        action = read.action if read is not None else None
        notes = read.notes if read is not None else (f"unknown domain {world.domain!r}",)
        previous_real = turns[index - 2].observation if index > 1 else world.initial_observation
        previous_seen = (
            simulated[index - 2] if mode == "free_running" and index > 1 else previous_real
        )

        def checks(observation: str, previous: str, action: Action | None = action) -> Checks:
            if domain is None:
                return ()
            return tuple(
                run_verifiers(domain, observation, action=action, previous=previous, world=world)
            )

        ctx = StepContext(step=index, action=turn.action, domain=world.domain, seed=seed)
        indexes = firing_indexes(perturbations, ctx)
        prompted = prompted_firings(perturbations, indexes, ctx)
        instructions = [str(f.details["instruction"]) for f in prompted]
        history = simulated if mode == "free_running" else [t.observation for t in turns]
        if rows is not None:
            messages = _row_messages(
                rows[index - 1], index, simulated if mode == "free_running" else None
            )
            messages[-1] = {
                "role": "user",
                "content": with_instructions(messages[-1]["content"], instructions),
            }
        else:
            past = [Turn(t.action, history[i]) for i, t in enumerate(turns[: index - 1])]
            messages = build_messages(world, past, turn.action, instructions=instructions)
        request = ModelRequest(messages=tuple(messages), sampling=sampling or EVAL_SAMPLING)
        started = time.monotonic()
        try:
            answer = await stream_answer(request, backend, started=started)
            extracted = extract_observation(answer.raw_output)
            if answer.finish_reason == "length" and extracted == NO_OUTPUT:
                raise OutputCutOff(request.sampling.max_tokens, answer.usage.completion_tokens)
            if not answer.raw_output.strip():
                raise MalformedOutput(
                    f"no output from the model (finish_reason={answer.finish_reason!r})"
                )
            observation, enforced = enforce(perturbations, indexes, extracted, ctx)
            thought = split_reasoning(answer.raw_output)[0]
            result = StepResult(
                action=turn.action,
                observation=observation,
                reasoning="\n\n".join(part for part in (answer.reasoning, thought) if part),
                raw_output=answer.raw_output,
                messages=request.messages,
                firings=(*prompted, *enforced),
                verifiers=checks(observation, previous_seen),
                timings=answer.timings(started),
                usage=answer.usage,
                finish_reason=answer.finish_reason,
                notes=notes,
            )
            outcome = SimulatedTurnResult(
                index, result, real_verifiers=checks(turn.observation, previous_real)
            )
            simulated.append(observation)
        except (SimulatorError, OSError, ValueError) as exc:
            outcome = SimulatedTurnResult(
                index,
                None,
                error=str(exc),
                error_kind=type(exc).__name__,
                real_verifiers=checks(turn.observation, previous_real),
                action_notes=notes,
            )
            simulated.append("")
        else:
            outcome = replace(outcome, action_notes=notes)
        results.append(outcome)
        if on_turn is not None:
            maybe = on_turn(outcome)
            if inspect.isawaitable(maybe):
                await maybe
    return results


def _known_domain(name: str) -> Domain | None:
    """The registered domain called ``name``; None for a task outside the studio's domains."""
    try:
        return get_domain(name)
    except KeyError:
        return None
