"""Parse Python-style function-call actions safely, with :mod:`ast`, never ``eval``.

Web (BrowserGym), os (pyautogui) and search (``web_search("...")``) actions are
written as Python calls. Agents' actions are untrusted, so only calls on plain or
dotted names with literal arguments are accepted; anything else is an error that
says what was found.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_FENCE = re.compile(r"^```[\w-]*\n(?P<body>.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class Call:
    """One parsed call: dotted function name, positional and keyword literal arguments."""

    func: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Param:
    """One parameter of an allowed function: name, accepted Python types, default."""

    name: str
    types: tuple[type, ...]
    required: bool = True
    default: Any = None


def strip_fence(text: str) -> str:
    """The body of a fenced code block (```python ... ```), or the text stripped."""
    stripped = text.strip()
    match = _FENCE.match(stripped)
    return match["body"].strip() if match else stripped


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _literal(node: ast.expr, where: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(f"{where} must be a literal value, found `{ast.unparse(node)}`") from None


def parse_calls(source: str, *, allowed_imports: frozenset[str] = frozenset()) -> list[Call]:
    """Every statement of ``source`` as a :class:`Call`; raises ValueError otherwise.

    ``import x`` statements are skipped when ``x`` is in ``allowed_imports``.
    """
    try:
        tree = ast.parse(strip_fence(source), mode="exec")
    except SyntaxError as error:
        raise ValueError(
            f"not valid Python call syntax: {error.msg} (line {error.lineno})"
        ) from None
    calls = []
    for statement in tree.body:
        if isinstance(statement, ast.Import) and all(
            alias.name in allowed_imports for alias in statement.names
        ):
            continue
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            raise ValueError(f"only function calls are allowed, found `{ast.unparse(statement)}`")
        node = statement.value
        func = _dotted(node.func)
        if func is None:
            raise ValueError(f"call a function by name, found `{ast.unparse(node.func)}`")
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            raise ValueError(f"{func}(): *args are not allowed")
        if any(keyword.arg is None for keyword in node.keywords):
            raise ValueError(f"{func}(): **kwargs are not allowed")
        args = tuple(_literal(arg, f"{func}() argument {i + 1}") for i, arg in enumerate(node.args))
        kwargs = {
            str(keyword.arg): _literal(keyword.value, f"{func}() argument {keyword.arg!r}")
            for keyword in node.keywords
        }
        calls.append(Call(func=func, args=args, kwargs=kwargs))
    if not calls:
        raise ValueError("no function call found")
    return calls


def parse_one_call(source: str) -> Call:
    """Exactly one call; raises ValueError for none or several."""
    calls = parse_calls(source)
    if len(calls) != 1:
        raise ValueError(f"expected exactly one action, found {len(calls)}")
    return calls[0]


def _type_names(types: tuple[type, ...]) -> str:
    names = {str: "text", int: "an integer", float: "a number", list: "a list", bool: "true/false"}
    return " or ".join(names.get(kind, kind.__name__) for kind in types)


def bind(call: Call, params: Sequence[Param]) -> dict[str, Any]:
    """Match a call's arguments to ``params``, checking count, names and types."""
    signature = ", ".join(p.name if p.required else f"{p.name}=..." for p in params)
    if len(call.args) > len(params):
        raise ValueError(
            f"{call.func}({signature}) takes at most {len(params)} arguments, got {len(call.args)}"
        )
    bound: dict[str, Any] = {}
    for param, value in zip(params, call.args, strict=False):
        bound[param.name] = value
    names = {p.name for p in params}
    for name, value in call.kwargs.items():
        if name not in names:
            raise ValueError(f"{call.func}({signature}) has no argument {name!r}")
        if name in bound:
            raise ValueError(f"{call.func}(): argument {name!r} given twice")
        bound[name] = value
    for param in params:
        if param.name not in bound:
            if param.required:
                raise ValueError(f"{call.func}({signature}): missing argument {param.name!r}")
            bound[param.name] = param.default
            continue
        value = bound[param.name]
        # bool is an int subclass; a flag is never a coordinate or an index.
        if isinstance(value, bool) and bool not in param.types:
            raise ValueError(
                f"{call.func}(): {param.name!r} must be {_type_names(param.types)}, got {value!r}"
            )
        if not isinstance(value, param.types):
            raise ValueError(
                f"{call.func}(): {param.name!r} must be {_type_names(param.types)}, got {value!r}"
            )
    return bound


_TOOL_CALL_TAG = re.compile(r"^<tool_call>\s*(?P<body>.*?)\s*</tool_call>$", re.DOTALL)


def parse_json_call(raw: str) -> tuple[str, dict[str, Any]] | None:
    """A JSON tool call as ``(name, arguments)``, or None when ``raw`` is not a JSON object.

    Accepts ``{"name": ..., "arguments": {...}}``, the OpenAI shape
    ``{"function": {"name": ..., "arguments": "<json text>"}}``, ``parameters`` as an
    alias of ``arguments``, and a Qwen ``<tool_call>...</tool_call>`` wrapper. Raises
    ValueError for a JSON object that is not a well-formed call.
    """
    text = strip_fence(raw)
    wrapped = _TOOL_CALL_TAG.match(text)
    if wrapped:
        text = wrapped["body"]
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        if wrapped:
            raise ValueError("the <tool_call> body is not valid JSON") from None
        return None
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("function"), dict):
        data = data["function"]
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError('a tool call needs a "name" (text), e.g. {"name": "...", "arguments": {}}')
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            raise ValueError(f'the "arguments" of {name!r} are text that is not JSON') from None
    if not isinstance(arguments, dict):
        raise ValueError(f'the "arguments" of {name!r} must be a JSON object')
    return name, arguments
