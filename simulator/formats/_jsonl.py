"""Shared JSONL plumbing: one JSON value per line, errors per line, never stopping."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeVar

from simulator.errors import FormatError, SimulatorError

T = TypeVar("T")


# Characters that str.splitlines() and some editors treat as line breaks but JSON
# leaves unescaped: escaped, a record can never be split by a reader.
_LINE_BREAKS = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"), ("\x85", "\\u0085"))


def dumps(value: Any) -> str:
    """One line of JSON: UTF-8 text kept as is (readable, diffable), line separators escaped.

    ``in`` + ``replace`` rather than ``str.translate``: a translate table costs a dict
    lookup per character, which dominated exports of long observations.
    """
    text = json.dumps(value, ensure_ascii=False)
    for char, escaped in _LINE_BREAKS:
        if char in text:
            text = text.replace(char, escaped)
    return text


def lines_of(source: str | Path | Iterable[str]) -> Iterator[str]:
    if isinstance(source, str | Path):
        with open(source, encoding="utf-8", newline="") as handle:
            yield from handle
    else:
        yield from source


class JsonLine(NamedTuple):
    number: int  # from 1, blank lines counted
    text: str  # as read, line break included: what a byte-exact writer gives back
    value: Any


def json_lines(source: str | Path | Iterable[str]) -> Iterator[JsonLine | FormatError]:
    """Each non-blank line with its JSON value; a :class:`FormatError` for each line that
    is not JSON. The one loop every JSONL reader and checker runs, so they agree on
    line numbers, blank lines and the message for bad JSON."""
    for number, line in enumerate(lines_of(source), start=1):
        if not line.strip():
            continue
        try:
            yield JsonLine(number, line, json.loads(line))
        except ValueError as exc:
            yield FormatError(f"invalid JSON ({exc})", line=number)


def iter_records(
    source: str | Path | Iterable[str], build: Callable[[Any], T]
) -> Iterator[T | FormatError]:
    """``build(json)`` for each non-blank line; a :class:`FormatError` for each bad one."""
    for item in json_lines(source):
        if isinstance(item, FormatError):
            yield item
            continue
        number = item.number
        try:
            yield build(item.value)
        except FormatError as exc:
            yield FormatError(exc.reason, line=number, field=exc.field)
        except (SimulatorError, KeyError, TypeError, ValueError, AttributeError) as exc:
            yield FormatError(f"malformed record ({type(exc).__name__}: {exc})", line=number)


def write_lines(lines: Iterable[str], target: str | Path | IO[str]) -> None:
    text = "".join(line + "\n" for line in lines)
    if isinstance(target, str | Path):
        Path(target).write_text(text, encoding="utf-8", newline="")
    else:
        target.write(text)
