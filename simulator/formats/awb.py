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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from simulator.awb_turns import (
    INSTRUCTION,
    STATE,
    TASK,
    read_observation,
    read_turn,
    render_observation,
    render_turn,
)
from simulator.episode import Turn
from simulator.errors import FormatError
from simulator.formats._jsonl import json_lines, write_lines
from simulator.types import Message

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


@dataclass(frozen=True)
class AwbRow:
    """One row; ``data`` is the row as read (key order kept), ``text`` its line as read.

    ``text`` keeps the line's ending too (none on a file's last line may be): it is
    what an export writes back, so a file comes out byte for byte as it went in,
    whatever serialiser wrote it.
    """

    data: Mapping[str, Any]
    line: int | None = None
    text: str | None = None

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
        return self.text.rstrip("\r\n") if self.text is not None else dump_row(self.data)

    @property
    def turn_texts(self) -> list[str]:
        """Each turn's prompt without the answered turn's instruction (turns 1..turn_idx)."""
        prompts = self.data["prompt"][: self.turn_idx]
        current = str(self.data["current_prompt"])
        last = prompts[-1]
        return [*prompts[:-1], current if last.startswith(current) else last]

    @property
    def instruction(self) -> str:
        """The text this row appends to its answered turn: ``prompt[turn_idx-1]`` minus ``current_prompt``.

        Taken from the data, never assumed: the benchmark's rows are authoritative.
        """
        last, current = self.data["prompt"][self.turn_idx - 1], str(self.data["current_prompt"])
        return last[len(current) :] if last.startswith(current) else ""

    def for_turn(self, turn: int) -> dict[str, Any]:
        """The row eval.py would evaluate for an earlier ``turn`` of this trajectory.

        Built from this row's turns and ground truths, with this row's instruction
        appended to ``turn``'s text: how the benchmark writes each turn's row.
        """
        if not 1 <= turn <= self.turn_idx:
            raise FormatError(f"turn {turn} is outside 1..{self.turn_idx}", field="turn_idx")
        if turn == self.turn_idx:
            return {key: self.data[key] for key in self.data if key in REQUIRED_FIELDS}
        texts = self.turn_texts
        built = {
            "prompt": [*texts[: turn - 1], texts[turn - 1] + self.instruction],
            "response": list(self.data["response"][:turn]),
            "current_prompt": texts[turn - 1],
            "turn_idx": turn,
        }
        return {key: built.get(key, self.data[key]) for key in self.data if key in REQUIRED_FIELDS}


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


def parse_row(text: str, line: int | None = None) -> AwbRow:
    """One stored line as a row, its text kept; :class:`FormatError` when it is not one."""
    for item in iter_awb([text]):
        if isinstance(item, FormatError):
            raise FormatError(item.reason, line=line, field=item.field)
        return AwbRow(item.data, line, text)
    raise FormatError("a blank line is not a row", line=line)


def id_key(value: Any) -> str:
    """A row's ``id`` as one text, ``5`` and ``"5"`` kept apart: how a trajectory is named."""
    return json.dumps(value)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every non-blank line of a file as an object, unchecked: ``eval.py``'s reader.

    For running rows as ``eval.py`` runs them (which accepts what it can use);
    :func:`read_awb` is the checking reader.
    """
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


def iter_awb(source: str | Path | Iterable[str]) -> Iterator[AwbRow | FormatError]:
    """Rows of a file (path) or of lines, with a :class:`FormatError` per bad line.

    Reading never stops at a bad line, so a checker can list every problem. Blank
    lines are skipped, as ``eval.py`` does.
    """
    for item in json_lines(source):
        if isinstance(item, FormatError):
            yield item
            continue
        problems = row_problems(item.value)
        if problems:
            for field, reason in problems:
                yield FormatError(reason, line=item.number, field=field)
        else:
            yield AwbRow(item.value, item.number, item.text)


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
    sections: Sequence[tuple[str, str]] = (),
    fences: Sequence[str | None] = (),
    instruction: str = INSTRUCTION,
) -> list[dict[str, Any]]:
    """One AgentWorldBench row per turn, as ``eval.py infer``/``judge`` expect.

    Row t has the rendered prompts of turns 1..t (turn 1 with ``sections``, such
    as the initial state; action i in the fence ``fences[i-1]``, none when
    missing; turn t with ``instruction``)
    and the observations of turns 1..t (turn t's is the ground truth the judge
    compares against).
    """
    prompts = [
        render_turn(
            i,
            turn.action,
            fence=fences[i - 1] if i <= len(fences) else None,
            sections=sections if i == 1 else (),
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
                "prompt": [*prompts[: t - 1], prompts[t - 1] + instruction],
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
    """The turns of one (task, id) group, read from its row with the highest ``turn_idx``.

    ``turns`` hold each action as the agent sent it (the fenced block's content)
    and each ground-truth observation without its marker; ``prompt_texts`` the
    turn prompts exactly as the row has them (without the instruction), so
    nothing the row said is lost; ``sections`` the first turn's sections
    (``Task Instruction``, ``Current State``, ``Current Phone State`` …) and
    ``fences`` each action's fence language, so rows can be written again.
    """

    task: str
    id: int | str
    system_str: str
    turns: tuple[Turn, ...]
    prompt_texts: tuple[str, ...]
    instruction: str
    sections: tuple[tuple[str, str], ...] = ()
    total_turns: int = 0
    fences: tuple[str | None, ...] = ()

    @property
    def domain(self) -> str:
        return self.task.rsplit("/", 1)[-1]

    @property
    def initial_state(self) -> str | None:
        return next((body for name, body in self.sections if name == STATE), None)

    @property
    def agent_task(self) -> str | None:
        return next((body for name, body in self.sections if name == TASK), None)


def trajectory_of(row: AwbRow) -> AwbTrajectory:
    """The trajectory ``row`` holds: every turn up to its own."""
    texts = row.turn_texts
    responses = row.data["response"]
    read = [read_turn(text) for text in texts]
    turns = tuple(
        Turn(
            turn.action if turn is not None else text,
            read_observation(responses[i]) if i < len(responses) else "",
        )
        for i, (text, turn) in enumerate(zip(texts, read, strict=True))
    )
    first = read[0]
    return AwbTrajectory(
        task=row.task,
        id=row.data["id"],
        system_str=row.data["system_str"],
        turns=turns,
        prompt_texts=tuple(texts),
        instruction=row.instruction,
        sections=first.sections if first is not None else (),
        total_turns=int(row.data["total_turns"]),
        fences=tuple(turn.fence if turn is not None else None for turn in read),
    )


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
    return [trajectory_of(row) for row in latest.values()]


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
