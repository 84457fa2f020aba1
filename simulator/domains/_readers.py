"""Lenient readers shared by the domains: JSON tool calls, Python calls, display text.

Imported traces are real data, so these readers never refuse: what does not fit
becomes a plain-words note. They only normalise what they read; nothing here is
evaluated (Python goes through :mod:`ast`, never ``eval``).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from simulator.domains._calls import Call, strip_fence
from simulator.domains.base import Action, ReadAction, unread

_INLINE_FENCE = re.compile(r"^`{1,3}(?P<body>[^`]+)`{1,3}$")
# Qwen wraps each call in <tool_call> tags, one block per parallel call; the last may be cut off.
_TOOL_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_DISPLAY_TEXT = 60
_DISPLAY_VALUE = 80


class Source(str):
    """A non-literal argument, kept as its source text: shown bare, ``click(x)`` not ``click('x')``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def loose_text(raw: str) -> str:
    """``raw`` stripped of whitespace, a fenced block or inline backticks around it."""
    text = strip_fence(raw)
    inline = _INLINE_FENCE.match(text)
    return inline["body"].strip() if inline else text


def clip(text: str, limit: int = _DISPLAY_TEXT) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: Any) -> str:
    if isinstance(value, str) and not isinstance(value, Source):
        return repr(clip(value))
    return clip(repr(value), _DISPLAY_VALUE)


def format_call(
    name: str, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None
) -> str:
    """A call as reviewers read it: ``fill('a12', 'x')``, ``click(index=46)``; long values clipped."""
    parts = [_shown(value) for value in args]
    parts += [f"{key}={_shown(value)}" for key, value in (kwargs or {}).items()]
    return f"{name}({', '.join(parts)})"


def load_json(text: str) -> Any:
    """The JSON value of ``text``, or None when it is not JSON (JSON null is never an action)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def sequence(raw: str, readings: Sequence[ReadAction]) -> ReadAction:
    """Several actions recorded as one turn (each read from ``raw``), as one ``sequence``.

    A single reading is returned as it is; readings without an action are left
    out of the sequence but keep their notes.
    """
    if len(readings) == 1:
        return readings[0]
    actions = [reading.action for reading in readings if reading.action is not None]
    notes = tuple(note for reading in readings for note in reading.notes)
    display = "; ".join(reading.display for reading in readings)
    if not actions:
        return ReadAction(raw=raw, action=None, display=raw, notes=notes)
    steps = [{"kind": action.kind, "args": dict(action.args)} for action in actions]
    return ReadAction(
        raw=raw,
        action=Action(raw=raw, kind="sequence", args={"actions": steps}),
        display=display,
        notes=notes,
    )


def first_step_args(action: Action) -> Mapping[str, Any]:
    """The arguments of ``action``, or of a sequence's first step.

    Only the first step surely acts on the screen the agent saw; later ones may
    act on elements that earlier steps brought up.
    """
    if action.kind == "sequence":
        steps = action.args.get("actions") or [{}]
        args: Mapping[str, Any] = steps[0].get("args", {})
        return args
    return action.args


@dataclass(frozen=True)
class ToolCall:
    """A JSON tool call as recorded: its name and its arguments, decoded when JSON text.

    ``arguments`` is whatever was recorded (usually an object); each domain notes
    what it cannot use.
    """

    name: str
    arguments: Any
    notes: tuple[str, ...] = ()

    def display(self) -> str:
        if isinstance(self.arguments, Mapping):
            return format_call(self.name, kwargs=self.arguments)
        return format_call(self.name, () if self.arguments is None else (self.arguments,))


def _call_objects(data: Any) -> list[Any] | None:
    """The call objects of a decoded JSON value, or None when it holds no calls."""
    if isinstance(data, Mapping) and isinstance(data.get("tool_calls"), list):
        data = data["tool_calls"]
    items = data if isinstance(data, list) else [data]
    if items and all(
        isinstance(item, Mapping) and ("name" in item or isinstance(item.get("function"), Mapping))
        for item in items
    ):
        return items
    return None


def _tool_call(item: Mapping[str, Any]) -> ToolCall:
    if isinstance(item.get("function"), Mapping):
        item = item["function"]
    name = item.get("name")
    notes: list[str] = []
    if not isinstance(name, str) or not name.strip():
        notes.append(f"the tool call has no name (found {name!r})")
        name = str(name)
    arguments = item.get("arguments", item.get("parameters", item.get("input", {})))
    if isinstance(arguments, str):
        decoded = load_json(arguments) if arguments.strip() else {}
        # Text that is not JSON stays text: a search tool takes a bare query.
        arguments = arguments if decoded is None else decoded
    return ToolCall(name=name, arguments=arguments, notes=tuple(notes))


def read_tool_calls(raw: str) -> list[ToolCall] | None:
    """The JSON tool calls in ``raw``, or None when it holds none.

    Reads ``{"name", "arguments"}`` (``parameters`` or ``input`` as aliases), the
    OpenAI shape ``{"type": "function", "function": {...}}``, a message's
    ``tool_calls`` list, a plain list of calls and Qwen ``<tool_call>`` blocks;
    arguments may be an object or JSON text.
    """
    text = loose_text(raw)
    bodies = _TOOL_CALL_BLOCK.findall(text) if text.startswith("<tool_call>") else [text]
    items: list[Any] = []
    for body in bodies:
        found = _call_objects(load_json(body)) if body[:1] in ("{", "[") else None
        if found is None:
            return None
        items += found
    return [_tool_call(item) for item in items]


@dataclass(frozen=True)
class PythonCalls:
    """The calls found in a piece of Python, and what else it held."""

    calls: tuple[Call, ...]
    notes: tuple[str, ...] = ()


def _call_name(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return ast.unparse(node) + "".join(f".{part}" for part in reversed(parts))


def _value(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return Source(ast.unparse(node))


def _read_call(node: ast.Call) -> tuple[Call, list[str]]:
    func = _call_name(node.func)
    args = tuple(_value(arg) for arg in node.args)
    kwargs = {
        keyword.arg if keyword.arg else f"**{ast.unparse(keyword.value)}": _value(keyword.value)
        for keyword in node.keywords
    }
    notes = [
        f"{func}(): `{value}` is not a literal value; kept as written"
        for value in (*args, *kwargs.values())
        if isinstance(value, Source)
    ]
    return Call(func=func, args=args, kwargs=kwargs), notes


def _statement_calls(body: Sequence[ast.stmt], skipped: set[str]) -> Iterator[ast.Call]:
    """The calls made as statements, nested blocks included, in source order."""
    for statement in body:
        value = getattr(statement, "value", None)
        if isinstance(statement, ast.Expr | ast.Assign | ast.AnnAssign) and isinstance(
            value, ast.Call
        ):
            yield value
            continue
        if not isinstance(statement, ast.Import | ast.ImportFrom):
            kind = type(statement).__name__.lower()
            skipped.add("expression" if kind == "expr" else kind)
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                yield from _statement_calls([child], skipped)
            elif isinstance(child, ast.ExceptHandler | ast.match_case):
                yield from _statement_calls(child.body, skipped)


def read_python_calls(source: str) -> PythonCalls:
    """Every call made as a statement in ``source``; raises ValueError when it is not Python.

    Unlike the strict :func:`simulator.domains._calls.parse_calls`, imports, loops
    and assignments are allowed (their calls are read, the rest is noted), and an
    argument that is not a literal is kept as its source text.
    """
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as error:
        raise ValueError(f"not valid Python: {error.msg} (line {error.lineno})") from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise ValueError(f"not valid Python: {error}") from None
    skipped: set[str] = set()
    calls: list[Call] = []
    notes: list[str] = []
    for node in _statement_calls(tree.body, skipped):
        call, call_notes = _read_call(node)
        calls.append(call)
        notes += call_notes
    if skipped:
        notes.append(
            f"the code also has statements that are not calls ({', '.join(sorted(skipped))}); "
            "only its calls were read"
        )
    return PythonCalls(calls=tuple(calls), notes=tuple(notes))


def read_python_sequence(raw: str, read_one: Callable[[Call], ReadAction], what: str) -> ReadAction:
    """The calls of Python-style text, each read by ``read_one``, as one reading.

    ``what`` names the expected action in the notes ("a search call").
    """
    try:
        code = read_python_calls(loose_text(raw))
    except ValueError as error:
        return unread(raw, f"not {what} ({error})")
    if not code.calls:
        return unread(raw, f"not {what}: no function call found")
    reading = sequence(raw, [read_one(call) for call in code.calls])
    return replace(reading, notes=(*code.notes, *reading.notes))


def name_arguments(call: Call, names: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """A call's arguments by name: positional ones take ``names`` in order, extras are noted.

    The lenient counterpart of :func:`simulator.domains._calls.bind`: nothing is
    checked here beyond what cannot be named at all.
    """
    named = dict(zip(names, call.args, strict=False))
    notes = []
    if len(call.args) > len(names):
        notes.append(
            f"{call.func}() takes at most {len(names)} positional arguments, got "
            f"{len(call.args)}; the extra ones were dropped"
        )
    for key, value in call.kwargs.items():
        if key in named:
            notes.append(f"{call.func}(): argument {key!r} given twice; the keyword one kept")
        named[key] = value
    return named, notes
