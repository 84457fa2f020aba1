"""AgentWorldBench JSONL, read and written exactly.

One row is one turn to predict: ``prompt[]`` holds the rendered turns up to the
current one (the last ending with the answer instruction), ``response[]`` the
observations (the last is the ground truth), ``current_prompt`` the current turn
without the instruction, ``system_str`` the world model's system prompt and
``turn_idx``/``total_turns`` where the row sits (1-based). Judged files add
``gen``, ``scores`` and the judge's fields. Rows keep every key, known or not,
in their original order, and are written as Qwen-AgentWorld's ``eval.py`` writes
them (``json.dumps(row, ensure_ascii=False)`` per line), so a file read and
written again is byte-identical.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from simulator.awb_turns import (
    INSTRUCTION,
    OBSERVATION_MARKER,
    STATE,
    render_observation,
    render_turn,
)
from simulator.episode import Turn
from simulator.errors import FormatError
from simulator.formats._jsonl import lines_of, write_lines

REQUIRED_FIELDS: dict[str, type | tuple[type, ...]] = {
    "task": str,
    "id": (int, str),
    "prompt": list,
    "response": list,
    "current_prompt": str,
    "system_str": str,
    "turn_idx": int,
    "total_turns": int,
}
NUMBER = (int, float)
OPTIONAL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "gen": str,
    "scores": (dict, list),
    "total_score": NUMBER,
    "format": NUMBER,
    "factuality": NUMBER,
    "consistency": NUMBER,
    "realism": NUMBER,
    "quality": NUMBER,
    "failed": NUMBER,
    "strengths": list,
    "weaknesses": list,
    "extracted_output": str,
    "judge_raw_output": str,
    "error_message": str,
}
_TURN = re.compile(
    r"\A### Turn (?P<n>\d+)\n(?:\*\*Current State:\*\*\n(?P<state>.*?)\n\n)?\*\*Action:\*\*\n(?P<action>.*)\Z",
    re.DOTALL,
)


@dataclass(frozen=True)
class AwbRow:
    """One row; ``data`` is the row exactly as read (key order kept)."""

    data: Mapping[str, Any]
    line: int | None = None

    @property
    def task(self) -> str:
        return str(self.data["task"])

    @property
    def domain(self) -> str:
        """The domain: the last part of ``task`` (``"agentworld/mcp"`` → ``"mcp"``)."""
        return self.task.rsplit("/", 1)[-1]

    @property
    def trajectory_key(self) -> tuple[str, str]:
        return (self.task, str(self.data["id"]))

    @property
    def turn_idx(self) -> int:
        return int(self.data["turn_idx"])

    def dumps(self) -> str:
        return dump_row(self.data)


def row_problems(data: Any) -> list[tuple[str, str]]:
    """(field, reason) for every problem of one decoded row."""
    if not isinstance(data, Mapping):
        return [("", "a row must be a JSON object")]
    problems: list[tuple[str, str]] = []
    for name, kind in REQUIRED_FIELDS.items():
        if name not in data:
            problems.append((name, "missing"))
        elif isinstance(data[name], bool) or not isinstance(data[name], kind):
            problems.append((name, f"must be {_type_name(kind)}"))
    for name, kind in OPTIONAL_FIELDS.items():
        if name in data and (isinstance(data[name], bool) or not isinstance(data[name], kind)):
            problems.append((name, f"must be {_type_name(kind)}"))
    for name in ("prompt", "response"):
        items = data.get(name)
        if isinstance(items, list) and not all(isinstance(x, str) for x in items):
            problems.append((name, "every item must be text"))
    if problems:
        return problems
    turn, total = data["turn_idx"], data["total_turns"]
    if turn < 1:
        problems.append(("turn_idx", "must be >= 1"))
    if total < turn:
        problems.append(("total_turns", f"is {total}, less than turn_idx {turn}"))
    if len(data["prompt"]) < turn:
        problems.append(("prompt", f"has {len(data['prompt'])} items, fewer than turn_idx {turn}"))
    if len(data["response"]) < turn - 1:
        problems.append(
            (
                "response",
                f"has {len(data['response'])} items; turn {turn} needs the previous {turn - 1}",
            )
        )
    if not data["task"]:
        problems.append(("task", "must not be empty"))
    return problems


def _type_name(kind: type | tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "text", list: "a list", dict: "an object"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names[k] for k in kinds)


def iter_awb(source: str | Path | Iterable[str]) -> Iterator[AwbRow | FormatError]:
    """Rows of a file (path) or of lines, with a :class:`FormatError` per bad line.

    Reading never stops at a bad line, so a checker can list every problem. Blank
    lines are skipped, as ``eval.py`` does.
    """
    for number, line in enumerate(lines_of(source), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            yield FormatError(f"invalid JSON ({exc})", line=number)
            continue
        problems = row_problems(data)
        if problems:
            for field, reason in problems:
                yield FormatError(reason, line=number, field=field)
        else:
            yield AwbRow(data, number)


def read_awb(source: str | Path | Iterable[str]) -> list[AwbRow]:
    """All rows; raises the first :class:`FormatError`."""
    rows = []
    for item in iter_awb(source):
        if isinstance(item, FormatError):
            raise item
        rows.append(item)
    return rows


def dump_row(data: Mapping[str, Any]) -> str:
    """One row as one line (no newline), in ``eval.py``'s serialisation."""
    return json.dumps(dict(data), ensure_ascii=False)


def write_awb(rows: Iterable[AwbRow | Mapping[str, Any]], target: str | Path | IO[str]) -> None:
    """Write rows, one per line, each ending in a newline."""
    write_lines((dump_row(row.data if isinstance(row, AwbRow) else row) for row in rows), target)


def episode_to_awb_rows(
    turns: Sequence[Turn],
    *,
    task: str,
    trajectory_id: int | str,
    system_str: str,
    initial_state: str | None = None,
) -> list[dict[str, Any]]:
    """One AgentWorldBench row per turn, as ``eval.py infer``/``judge`` expect.

    Row t has the rendered prompts of turns 1..t (turn 1 with the initial state,
    turn t with the answer instruction) and the observations of turns 1..t (turn
    t's is the ground truth the judge compares against).
    """
    prompts = [
        render_turn(
            i,
            turn.action,
            sections=[(STATE, initial_state)] if i == 1 and initial_state is not None else [],
        )
        for i, turn in enumerate(turns, start=1)
    ]
    responses = [render_observation(turn.observation) for turn in turns]
    rows = []
    for t in range(1, len(turns) + 1):
        rows.append(
            {
                "task": task,
                "id": trajectory_id,
                "prompt": [*prompts[: t - 1], prompts[t - 1] + INSTRUCTION],
                "response": responses[:t],
                "current_prompt": prompts[t - 1],
                "system_str": system_str,
                "turn_idx": t,
                "total_turns": len(turns),
            }
        )
    return rows


@dataclass(frozen=True)
class AwbTrajectory:
    """The turns of one (task, id) group, rebuilt from its rows."""

    task: str
    id: int | str
    system_str: str
    initial_state: str | None
    turns: tuple[Turn, ...]

    @property
    def domain(self) -> str:
        return self.task.rsplit("/", 1)[-1]


def _unrender_prompt(prompt: str) -> tuple[str | None, str]:
    """(current state, action) of a rendered turn; the whole text when it is not one."""
    if prompt.endswith(INSTRUCTION):
        prompt = prompt[: -len(INSTRUCTION)]
    match = _TURN.match(prompt)
    if not match:
        return None, prompt
    return match.group("state"), match.group("action")


def _unrender_response(response: str) -> str:
    if response.startswith(OBSERVATION_MARKER + "\n"):
        return response[len(OBSERVATION_MARKER) + 1 :]
    return response


def awb_rows_to_trajectories(rows: Iterable[AwbRow]) -> list[AwbTrajectory]:
    """Group rows by (task, id), in order of first appearance, into trajectories.

    Each trajectory is read from its row with the highest ``turn_idx``, which
    holds every earlier prompt and response.
    """
    latest: dict[tuple[str, str], AwbRow] = {}
    for row in rows:
        key = row.trajectory_key
        if key not in latest or row.turn_idx > latest[key].turn_idx:
            latest[key] = row
    trajectories = []
    for row in latest.values():
        prompts, responses = row.data["prompt"], row.data["response"]
        turns = []
        initial_state: str | None = None
        for i in range(row.turn_idx):
            state, action = _unrender_prompt(prompts[i])
            if i == 0:
                initial_state = state
            observation = _unrender_response(responses[i]) if i < len(responses) else ""
            turns.append(Turn(action, observation))
        trajectories.append(
            AwbTrajectory(
                task=row.task,
                id=row.data["id"],
                system_str=row.data["system_str"],
                initial_state=initial_state,
                turns=tuple(turns),
            )
        )
    return trajectories
