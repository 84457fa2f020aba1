"""The grammar of accessibility-tree text, shared by the verifiers and the renderer.

One node a line, nested by indentation (BrowserGym prints one tab per level). Real
trees come from three printers, and a world model imitates any of them:

- BrowserGym (and WebArena and WorkArena run through it)::

      RootWebArea 'One Stop Market', focused, url='http://...'
      \\t[227] link 'My Account', url='http://.../customer/account/'
      \\t[a312] combobox 'Sort By' value='Position', hasPopup='menu', expanded=False
      \\t\\tStaticText 'Welcome, Emma\\'s shop'
      \\t[97] generic, live='polite'

  ``[bid]`` is left out where BrowserGym has none (text nodes, the document root);
  WorkArena's bids carry a frame prefix (``a312``). The name is ``repr(name)``,
  absent only for a nameless ``generic``; a form field's value follows after a
  space; properties follow as ``, key`` (a true flag) or ``, key=repr(value)``.
- WebArena's own environment: ``[1280] link 'Image' url: http://... focused: True``,
  properties as ``key: value`` after a space, unquoted.

Anything else on a line (prose, Markdown, markup) is not a node, which is how the
verifier tells a tree from text that merely mentions one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from simulator.quoting import QUOTED, unquote

__all__ = ["AxLine", "AxNode", "axtree_lines", "axtree_problems", "read_lines"]

# A property value: repr() of a string, or of a bool or number (True, 0, -1.5).
_VALUE = rf"(?:{QUOTED}|[^\s,'\"]+)"
_KEY = r"[A-Za-z_][\w-]*"
_BROWSERGYM_PROP = re.compile(rf",[ ]?(?P<key>{_KEY})(?:=(?P<value>{_VALUE}))?")
_WEBARENA_PROP = re.compile(rf"(?:^| )(?P<key>{_KEY}):(?: (?P<value>.*?))?(?= {_KEY}:|$)")
_LINE = re.compile(
    rf"(?P<indent>[\t ]*)(?:\[(?P<bid>[\w-]+)\] )?(?P<role>[A-Za-z][\w-]*)"
    rf"(?: (?P<name>{QUOTED}))?"
    rf"(?: value=(?P<value>{_VALUE}))?"
    rf"(?P<props>(?:,[ ]?{_KEY}(?:={_VALUE})?)*)"
    rf"(?P<webarena> {_KEY}:(?: .*)?)?"
    r"[ \t]*"
)
# What BrowserGym prints without a bid: text and the document itself. A tree made
# only of these (a blank page) offers nothing to act on, rightly.
_BIDLESS_ROLES = frozenset({"RootWebArea", "StaticText", "LineBreak", "ListMarker"})


@dataclass(frozen=True)
class AxNode:
    """One node line of the tree.

    ``depth`` is the nesting level (0 at the left margin), found the way an outline
    is read: a line is a child of the nearest line above indented less, so tab and
    space indentation both work. ``bid`` is None for nodes printed without one.
    ``properties`` are (key, value) in printed order: a form field's ``value`` first,
    a bare flag such as ``focused`` with the value ``''``, quoted values decoded.
    """

    depth: int
    bid: str | None
    role: str
    name: str
    properties: tuple[tuple[str, str], ...] = ()


class AxLine(NamedTuple):
    """A non-blank line: its number (from 1), nesting level, stripped text and node.

    ``node`` is None when the line is not one; the line still has a depth, so that a
    renderer can show it in place.
    """

    number: int
    depth: int
    text: str
    node: AxNode | None


def _value(raw: str | None) -> str:
    if raw is None:
        return ""
    return unquote(raw) if raw[:1] in ("'", '"') else raw


def _properties(match: re.Match[str]) -> tuple[tuple[str, str], ...]:
    found = [("value", _value(match["value"]))] if match["value"] is not None else []
    found += [
        (prop["key"], _value(prop["value"])) for prop in _BROWSERGYM_PROP.finditer(match["props"])
    ]
    webarena = (match["webarena"] or "").strip()
    found += [
        (prop["key"], (prop["value"] or "").strip()) for prop in _WEBARENA_PROP.finditer(webarena)
    ]
    return tuple(found)


def read_lines(text: str) -> list[AxLine]:
    """Every non-blank line of ``text``, with its node when the line is one."""
    lines = []
    # Indentation widths of the lines that are still open as possible parents.
    open_indents: list[int] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" \t"))
        while open_indents and open_indents[-1] >= indent:
            open_indents.pop()
        depth = len(open_indents)
        open_indents.append(indent)
        match = _LINE.fullmatch(line)
        node = None
        if match:
            node = AxNode(
                depth=depth,
                bid=match["bid"],
                role=match["role"],
                name=unquote(match["name"]) if match["name"] else "",
                properties=_properties(match),
            )
        lines.append(AxLine(number, depth, line.strip(), node))
    return lines


def axtree_lines(text: str) -> list[AxNode]:
    """The nodes of an accessibility tree; lines that are not nodes are skipped."""
    return [line.node for line in read_lines(text) if line.node is not None]


def axtree_problems(text: str) -> list[str]:
    """Why ``text`` is not a well-formed accessibility tree (empty list when it is)."""
    lines = read_lines(text)
    problems = [
        f"line {line.number} is not a `[bid] role 'name'` node: {line.text[:60]!r}"
        for line in lines
        if line.node is None
    ]
    nodes = [line.node for line in lines if line.node is not None]
    elements = [node for node in nodes if node.role not in _BIDLESS_ROLES]
    if elements and not any(node.bid for node in nodes):
        problems.append("no line carries a [bid], so the agent could not act on anything")
    return problems[:5]
