"""Differences between a real and a simulated observation, for side-by-side review.

Text gets a line diff whose changed lines carry a word diff; JSON (both sides
parse to an object or array) gets a structural diff: one entry per path that
was added, removed or changed. Pure data out, so any view can render it and the
text stays escapable (nothing here produces HTML).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

SegmentOp = Literal["equal", "delete", "insert"]
LineOp = Literal["equal", "delete", "insert", "replace"]
ChangeKind = Literal["added", "removed", "changed", "type"]

#: Past this many lines a side, only the line diff is computed (word diffs are skipped).
WORD_DIFF_MAX_LINES = 2000
_WORDS = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True)
class Segment:
    op: SegmentOp
    text: str


@dataclass(frozen=True)
class DiffLine:
    """One row of a two-column diff; ``real``/``simulated`` are None where a side has no line."""

    op: LineOp
    real: tuple[Segment, ...] | None
    simulated: tuple[Segment, ...] | None


@dataclass(frozen=True)
class JsonChange:
    """One structural difference at ``path`` (``$.results[0].title``)."""

    path: str
    kind: ChangeKind
    real: Any = None
    simulated: Any = None

    def describe(self) -> str:
        def show(value: Any) -> str:
            text = json.dumps(value, ensure_ascii=False)
            return text if len(text) <= 80 else text[:77] + "..."

        if self.kind == "added":
            return f"{self.path}: only in simulated ({show(self.simulated)})"
        if self.kind == "removed":
            return f"{self.path}: missing from simulated (real {show(self.real)})"
        if self.kind == "type":
            return (
                f"{self.path}: type {type(self.real).__name__} became "
                f"{type(self.simulated).__name__}"
            )
        return f"{self.path}: {show(self.real)} → {show(self.simulated)}"


@dataclass(frozen=True)
class Diff:
    """The whole comparison: ``mode`` is ``"json"`` or ``"text"``; ``lines`` is always there."""

    mode: Literal["json", "text"]
    lines: tuple[DiffLine, ...]
    changes: tuple[JsonChange, ...] = ()
    similarity: float = 1.0
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        return all(line.op == "equal" for line in self.lines) and not self.changes


def word_diff(real: str, simulated: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """(real segments, simulated segments): equal words plus deleted / inserted ones."""
    a, b = _WORDS.findall(real), _WORDS.findall(simulated)
    left: list[Segment] = []
    right: list[Segment] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            left.append(Segment("equal", "".join(a[i1:i2])))
            right.append(Segment("equal", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            left.append(Segment("delete", "".join(a[i1:i2])))
        if j2 > j1:
            right.append(Segment("insert", "".join(b[j1:j2])))
    return tuple(left), tuple(right)


def text_diff(real: str, simulated: str) -> Diff:
    """Line diff; a replaced line pair gets word segments."""
    a, b = real.splitlines(), simulated.splitlines()
    words = max(len(a), len(b)) <= WORD_DIFF_MAX_LINES
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    lines: list[DiffLine] = []
    stats = {"equal": 0, "delete": 0, "insert": 0, "replace": 0}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for line in a[i1:i2]:
                seg = (Segment("equal", line),)
                lines.append(DiffLine("equal", seg, seg))
            stats["equal"] += i2 - i1
        elif tag == "delete":
            lines += [DiffLine("delete", (Segment("delete", x),), None) for x in a[i1:i2]]
            stats["delete"] += i2 - i1
        elif tag == "insert":
            lines += [DiffLine("insert", None, (Segment("insert", x),)) for x in b[j1:j2]]
            stats["insert"] += j2 - j1
        else:
            for k in range(max(i2 - i1, j2 - j1)):
                left = a[i1 + k] if i1 + k < i2 else None
                right = b[j1 + k] if j1 + k < j2 else None
                if left is not None and right is not None:
                    if words:
                        ls, rs = word_diff(left, right)
                    else:
                        ls, rs = (Segment("delete", left),), (Segment("insert", right),)
                    lines.append(DiffLine("replace", ls, rs))
                    stats["replace"] += 1
                elif left is not None:
                    lines.append(DiffLine("delete", (Segment("delete", left),), None))
                    stats["delete"] += 1
                elif right is not None:
                    lines.append(DiffLine("insert", None, (Segment("insert", right),)))
                    stats["insert"] += 1
    return Diff("text", tuple(lines), similarity=round(matcher.ratio(), 4), stats=stats)


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if re.fullmatch(r"[A-Za-z_]\w*", key) else f"{path}[{json.dumps(key)}]"


def json_changes(real: Any, simulated: Any, path: str = "$") -> list[JsonChange]:
    """Every structural difference; lists are compared position by position."""
    if isinstance(real, dict) and isinstance(simulated, dict):
        changes: list[JsonChange] = []
        for key in real:
            sub = _key_path(path, str(key))
            if key not in simulated:
                changes.append(JsonChange(sub, "removed", real=real[key]))
            else:
                changes += json_changes(real[key], simulated[key], sub)
        changes += [
            JsonChange(_key_path(path, str(k)), "added", simulated=simulated[k])
            for k in simulated
            if k not in real
        ]
        return changes
    if isinstance(real, list) and isinstance(simulated, list):
        changes = []
        for i in range(max(len(real), len(simulated))):
            sub = f"{path}[{i}]"
            if i >= len(simulated):
                changes.append(JsonChange(sub, "removed", real=real[i]))
            elif i >= len(real):
                changes.append(JsonChange(sub, "added", simulated=simulated[i]))
            else:
                changes += json_changes(real[i], simulated[i], sub)
        return changes
    if _kind(real) != _kind(simulated):
        return [JsonChange(path, "type", real, simulated)]
    if real != simulated:
        return [JsonChange(path, "changed", real, simulated)]
    return []


def _kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def parse_json(text: str) -> Any:
    """The JSON container in ``text`` (an optional ```json fence is allowed), else None."""
    stripped = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, re.DOTALL)
    if fenced:
        stripped = fenced.group(1)
    if stripped[:1] not in ("{", "["):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def diff_observations(real: str, simulated: str) -> Diff:
    """A structural diff when both sides are JSON, else a text diff.

    JSON sides are also shown as a line diff of their pretty-printed form, so
    the two columns line up key by key.
    """
    a, b = parse_json(real), parse_json(simulated)
    if a is None or b is None:
        return text_diff(real, simulated)
    pretty = text_diff(
        json.dumps(a, indent=2, ensure_ascii=False, sort_keys=True),
        json.dumps(b, indent=2, ensure_ascii=False, sort_keys=True),
    )
    return Diff(
        "json",
        pretty.lines,
        tuple(json_changes(a, b)),
        similarity=pretty.similarity,
        stats=pretty.stats,
    )
