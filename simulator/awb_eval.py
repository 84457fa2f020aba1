"""AgentWorldBench's three evaluation steps, compatible with Qwen-AgentWorld's ``eval.py``.

- **infer**: each row's request is the system prompt (``system_str``), the earlier
  turns as user (``prompt[i]``) / assistant (``response[i]``) pairs and then the
  current turn's prompt ``prompt[turn_idx - 1]``; the model's content text is added
  to the row as ``gen`` (``""`` when the call fails).
- **judge**: :func:`simulator.judge.judge_row` adds ``total_score`` (1–5), the five
  dimension scores, ``failed``, ``strengths``, ``weaknesses``, ``extracted_output``
  and ``judge_raw_output``.
- **score**: :func:`aggregate` groups rows by domain, keeps rows with
  ``failed == 0``, averages each dimension's non-zero values and maps the mean to
  0–100 with ``(mean - 1) / 4 * 100``; the overall score is the mean over every
  valid row's ``total_score`` (not the mean of the domains). :func:`format_report`
  prints it exactly as ``eval.py score`` does.

:func:`load_data` reads a benchmark folder as ``eval.py infer --data-dir`` does.
:func:`run_rows` runs infer or judge over many rows at once (an asyncio
semaphore bounds concurrency), appending each finished row to the output file so
an interrupted run can resume where it stopped (rows are keyed by task, id and
turn_idx, and a saved row is reused only if it still carries the input row's
fields unchanged).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import IO, Any

from simulator.backends.base import Backend, ModelRequest
from simulator.chat_client import ChatClient
from simulator.episode import StepResult
from simulator.judge import DIMENSIONS, ask, domain_of, normalize
from simulator.perturbations import Perturbation
from simulator.types import EVAL_SAMPLING, Message, Sampling
from simulator.verifiers import VerifierResult
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


def row_key(row: Mapping[str, Any]) -> RowKey:
    """(task, id, turn_idx): what identifies a row across infer, judge and resume."""
    return (str(row.get("task", "")), json.dumps(row.get("id")), int(row.get("turn_idx", 0)))


def infer_messages(row: Mapping[str, Any]) -> list[Message]:
    """The world-model request for one row, built as ``eval.py infer`` builds it."""
    turn = int(row["turn_idx"]) - 1
    prompts, responses = list(row.get("prompt", [])), list(row.get("response", []))
    messages: list[Message] = []
    if row.get("system_str"):
        messages.append({"role": "system", "content": str(row["system_str"])})
    for prompt, response in zip(prompts[:turn], responses[:turn], strict=False):
        messages.append({"role": "user", "content": prompt})
        messages.append({"role": "assistant", "content": response})
    messages.append({"role": "user", "content": prompts[turn]})
    return messages


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


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every non-blank line of a JSONL file as an object."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_data(data_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of every ``*_test.jsonl`` file in ``data_dir``, files in name order.

    This is ``eval.py``'s loader (AgentWorldBench ships one ``<domain>_test.jsonl``
    per domain): other files are ignored, lines are stripped and blank ones
    skipped, so the same folder gives the same rows in the same order.
    """
    rows = []
    for path in sorted(Path(data_dir).glob("*_test.jsonl")):
        with open(path, encoding="utf-8") as handle:
            rows += [json.loads(line) for line in (raw.strip() for raw in handle) if line]
    return rows


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
            sink.write(json.dumps(result, ensure_ascii=False) + "\n")
            sink.flush()
            if on_row is not None:
                on_row(result)
            meter.advance()

        await asyncio.gather(*(one(r) for r in pending))
    ordered = [results[row_key(r)] for r in rows if row_key(r) in results]
    with open(out_path, "w", encoding="utf-8") as sink:
        for row in ordered:
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
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


class AwbPromptBackend:
    """Wraps a backend so the engine's requests take AgentWorldBench's message form.

    The engine builds a request from the world's domain prompt and bare actions;
    a trace imported from AgentWorldBench was recorded with its own system prompt
    (``system_str``) and rendered turns (``### Turn k ... **Action:** ...``). This
    wrapper swaps in those texts, keeping the history observations the engine
    chose (real ones when teacher-forced, simulated ones when free-running) and
    any control instructions the engine appended to the current action. With real
    history the request is exactly ``eval.py infer``'s.
    """

    def __init__(
        self, inner: Backend, *, system_prompt: str, prompts: Sequence[str], actions: Sequence[str]
    ) -> None:
        self.inner = inner
        self.name = f"awb:{inner.name}"
        self.system_prompt = system_prompt
        self.prompts = list(prompts)
        self.actions = list(actions)

    def rewrite(self, messages: Sequence[Message]) -> tuple[Message, ...]:
        from simulator.prompting import AWB_PROMPT_SUFFIX, render_awb_observation

        users = [m["content"] for m in messages if m["role"] == "user"]
        observations = [m["content"] for m in messages if m["role"] == "assistant"]
        turn = len(users)
        out: list[Message] = []
        if self.system_prompt:
            out.append({"role": "system", "content": self.system_prompt})
        for i in range(turn - 1):
            out.append({"role": "user", "content": self.prompts[i]})
            out.append({"role": "assistant", "content": render_awb_observation(observations[i])})
        action = self.actions[turn - 1]
        control = users[-1][len(action) :] if users[-1].startswith(action) else ""
        out.append(
            {"role": "user", "content": self.prompts[turn - 1] + AWB_PROMPT_SUFFIX + control}
        )
        return tuple(out)

    def stream(self, request: ModelRequest) -> Any:
        from dataclasses import replace

        return self.inner.stream(replace(request, messages=self.rewrite(request.messages)))

    async def health(self) -> Any:
        return await self.inner.health()

    async def info(self) -> dict[str, Any]:
        return await self.inner.info()

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass(frozen=True)
class RecordedTurn:
    """One turn of a recorded trace; ``prompt`` is its rendered AgentWorldBench turn, if any."""

    action: str
    observation: str
    prompt: str = ""


@dataclass(frozen=True)
class SimulatedTurnResult:
    """One simulated turn: the engine's result, or the error that stopped it."""

    index: int
    result: StepResult | None
    error: str = ""
    error_kind: str = ""
    real_verifiers: tuple[VerifierResult, ...] = ()


async def simulate_trace(
    world: World,
    turns: Sequence[RecordedTurn],
    backend: Backend,
    *,
    mode: str = "teacher_forced",
    perturbations: Sequence[Perturbation] = (),
    seed: int = 0,
    system_prompt: str | None = None,
    sampling: Sampling | None = None,
    on_turn: Callable[[SimulatedTurnResult], Awaitable[None] | None] | None = None,
) -> list[SimulatedTurnResult]:
    """Run the world model over a trace's actions with :func:`simulator.engine.step`.

    ``teacher_forced``: each turn sees the real history (as AgentWorldBench scores
    it). ``free_running``: each turn sees the simulated history so far. When the
    trace came from AgentWorldBench (``system_prompt`` given and every turn has a
    ``prompt``), requests take its message form (:class:`AwbPromptBackend`).
    Rule verifiers run on both the simulated and the real observation.
    """
    import inspect

    from simulator.engine import step
    from simulator.episode import EpisodeState, Turn
    from simulator.errors import SimulatorError
    from simulator.prompting import domain_for
    from simulator.verifiers import run_verifiers

    if mode not in ("teacher_forced", "free_running"):
        raise ValueError(f"unknown mode {mode!r}")
    if system_prompt is not None and all(t.prompt for t in turns):
        backend = AwbPromptBackend(
            backend,
            system_prompt=system_prompt,
            prompts=[t.prompt for t in turns],
            actions=[t.action for t in turns],
        )
    domain = domain_for(world)
    history: list[Turn] = []
    results = []
    for index, turn in enumerate(turns, start=1):
        previous_real = turns[index - 2].observation if index > 1 else world.initial_observation
        try:
            parsed_action = domain.parse_action(turn.action, world)
            real_checks = tuple(
                run_verifiers(
                    world.domain,
                    turn.observation,
                    action=parsed_action,
                    previous=previous_real,
                    world=world,
                )
            )
        except SimulatorError:
            real_checks = ()
        state = EpisodeState(
            world=world,
            history=tuple(history)
            if mode == "free_running"
            else tuple(Turn(t.action, t.observation) for t in turns[: index - 1]),
            perturbations=tuple(perturbations),
            seed=seed,
            sampling=sampling,
        )
        try:
            result = await step(state, turn.action, backend)
            outcome = SimulatedTurnResult(index, result, real_verifiers=real_checks)
            history.append(result.turn())
        except (SimulatorError, OSError, ValueError) as exc:
            outcome = SimulatedTurnResult(
                index,
                None,
                error=str(exc),
                error_kind=type(exc).__name__,
                real_verifiers=real_checks,
            )
            history.append(Turn(turn.action, ""))
        results.append(outcome)
        if on_turn is not None:
            maybe = on_turn(outcome)
            if inspect.isawaitable(maybe):
                await maybe
    return results
