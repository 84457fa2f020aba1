"""BrowserGym accessibility trees (``[227] link 'My Account', url='...'``) as a readable page.

Indentation is nesting; each line becomes one element of the outline, with its bid
shown so a reviewer can match the agent's ``click("227")`` to what it clicked.
"""

from __future__ import annotations

import re

from simulator.render._outline import OutlineNode, add_node, render_outline, unquote
from simulator.render._page import preformatted

_QUOTED = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_LINE = re.compile(rf"(?:\[(?P<bid>[^\]]*)\]\s+)?(?P<role>\S+)(?:\s+(?P<name>{_QUOTED}))?")
_PROP = re.compile(rf"\s*,\s*(?P<key>[^=,\s]+)(?:=(?P<value>{_QUOTED}|[^,]*))?")


def _props(rest: str) -> list[tuple[str, str]]:
    props = []
    position = 0
    while position < len(rest):
        match = _PROP.match(rest, position)
        if not match:
            # Not a property list: keep the remainder visible rather than drop it.
            props.append((rest[position:].strip(), ""))
            break
        value = match["value"] or ""
        if value[:1] in ("'", '"') and len(value) > 1:
            value = unquote(value)
        props.append((match["key"], value.strip()))
        position = match.end()
    return props


def parse_axtree(observation: str) -> list[OutlineNode]:
    """The AXTree's root nodes; every non-blank line is one node, nested by its indentation."""
    roots: list[OutlineNode] = []
    stack: list[tuple[int, OutlineNode]] = []
    for raw in observation.splitlines():
        line = raw.strip()
        if not line:
            continue
        match = _LINE.match(line)
        assert match is not None  # a non-blank line always has a first token
        name = match["name"]
        node = OutlineNode(
            role=match["role"],
            name=unquote(name) if name else "",
            ident=match["bid"] or "",
            props=_props(line[match.end() :]),
        )
        add_node(roots, stack, len(raw) - len(raw.lstrip()), node)
    return roots


def render_axtree(observation: str, *, title: str = "") -> str:
    """The AXTree as nested labelled elements (role badge, styled name, bid, properties)."""
    roots = parse_axtree(observation)
    if not roots:
        return preformatted(observation, title=title, note="empty accessibility tree")
    if not title and roots[0].role == "RootWebArea":
        title = roots[0].name
    return render_outline(roots, title=title)
