"""BrowserGym accessibility trees (``[227] link 'My Account', url='...'``) as a readable page.

Indentation is nesting; each line becomes one element of the outline, with its bid
shown so a reviewer can match the agent's ``click("227")`` to what it clicked.
Lines are read with the verifiers' grammar (:mod:`simulator.axtree`), so the page
shows a node exactly as the checks understood it; a line outside that grammar is
still shown, split as well as it can be, because a reviewer must see what the
model wrote even when it is broken.
"""

from __future__ import annotations

import re

from simulator.axtree import AxNode, read_lines
from simulator.quoting import QUOTED, unquote
from simulator.render._outline import OutlineNode, add_node, render_outline
from simulator.render._page import preformatted

_LOOSE_LINE = re.compile(rf"(?:\[(?P<bid>[^\]]*)\]\s+)?(?P<role>\S+)(?:\s+(?P<name>{QUOTED}))?")
_LOOSE_PROP = re.compile(rf"\s*,\s*(?P<key>[^=,\s]+)(?:=(?P<value>{QUOTED}|[^,]*))?")


def _loose_props(rest: str) -> list[tuple[str, str]]:
    props = []
    position = 0
    while position < len(rest):
        match = _LOOSE_PROP.match(rest, position)
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


def _loose_node(line: str) -> OutlineNode:
    """A line outside the grammar, split into bid, first word, quoted name and the rest."""
    match = _LOOSE_LINE.match(line)
    assert match is not None  # a non-blank line always has a first token
    name = match["name"]
    return OutlineNode(
        role=match["role"],
        name=unquote(name) if name else "",
        ident=match["bid"] or "",
        props=_loose_props(line[match.end() :]),
    )


def _outline_node(node: AxNode) -> OutlineNode:
    return OutlineNode(
        role=node.role, name=node.name, ident=node.bid or "", props=list(node.properties)
    )


def parse_axtree(observation: str) -> list[OutlineNode]:
    """The AXTree's root nodes; every non-blank line is one node, nested by its indentation."""
    roots: list[OutlineNode] = []
    stack: list[tuple[int, OutlineNode]] = []
    for line in read_lines(observation):
        node = _outline_node(line.node) if line.node else _loose_node(line.text)
        add_node(roots, stack, line.depth, node)
    return roots


def render_axtree(observation: str, *, title: str = "") -> str:
    """The AXTree as nested labelled elements (role badge, styled name, bid, properties)."""
    roots = parse_axtree(observation)
    if not roots:
        return preformatted(observation, title=title, note="empty accessibility tree")
    if not title and roots[0].role == "RootWebArea":
        title = roots[0].name
    return render_outline(roots, title=title)
