"""Playwright ARIA snapshots (``- button "Add to cart" [ref=s5e44]``) as a readable page.

The snapshot is a YAML list; it is read line by line here (no YAML library, no
evaluation), which also copes with the truncated snapshots a model may produce.
"""

from __future__ import annotations

import re

from simulator.quoting import unquote
from simulator.render._outline import OutlineNode, add_node, render_outline
from simulator.render._page import preformatted

_KEY = re.compile(
    r"(?P<role>[^\s:\"'\[]+)"
    r"(?:\s+(?P<name>\"(?:[^\"\\]|\\.)*\"|/(?:[^/\\]|\\.)*/))?"
    r"(?P<attrs>(?:\s*\[[^\]]*\])*)"
)
_ATTR = re.compile(r"\[([^\]=]*)(?:=([^\]]*))?\]")


def _scalar(value: str) -> str:
    """A YAML scalar's text: quoted forms are unquoted, plain ones kept as written."""
    value = value.strip()
    if len(value) > 1 and value[0] == value[-1] == '"':
        return unquote(value)
    if len(value) > 1 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def _split_quoted_key(body: str) -> tuple[str, str]:
    """``'link "a: b"': value`` -> (key, rest): YAML quotes keys that contain ``: ``."""
    quote = body[0]
    position = 1
    while position < len(body):
        char = body[position]
        if quote == "'" and body.startswith("''", position):
            position += 2
            continue
        if quote == '"' and char == "\\":
            position += 2
            continue
        if char == quote:
            return _scalar(body[: position + 1]), body[position + 1 :]
        position += 1
    return body[1:], ""


def _item(body: str) -> tuple[re.Match[str] | None, str | None]:
    """The key's match (role, name, attrs) and the inline value (None when absent)."""
    if body[0] in "'\"":
        key, rest = _split_quoted_key(body)
    else:
        key, rest = body, ""
    match = _KEY.match(key)
    if match is None:
        return None, None
    rest = key[match.end() :] + rest
    colon = re.match(r"\s*:(?:\s+(.*)|\s*$)", rest)
    if colon is None:
        return (match, None) if not rest.strip() else (None, None)
    return match, colon[1]


def parse_aria_yaml(observation: str) -> list[OutlineNode]:
    """The snapshot's root elements; ``/url``-style entries become their parent's properties."""
    roots: list[OutlineNode] = []
    stack: list[tuple[int, OutlineNode]] = []
    last_text: OutlineNode | None = None
    for raw in observation.splitlines():
        line = raw.strip()
        if not line:
            continue
        indent = len(raw) - len(raw.lstrip())
        if not line.startswith("- "):
            if last_text is not None:  # a folded continuation of the previous text
                last_text.name += " " + line
            else:
                last_text = OutlineNode(role="text", name=line)
                add_node(roots, stack, indent, last_text)
            continue
        body = line[2:].strip()
        match, value = _item(body)
        if match is None:
            last_text = OutlineNode(role="text", name=body)
            add_node(roots, stack, indent, last_text)
            continue
        role = match["role"]
        if role.startswith("/"):
            while stack and stack[-1][0] >= indent:
                stack.pop()
            if stack:
                stack[-1][1].props.append((role[1:], _scalar(value or "")))
                last_text = None
                continue
        name = match["name"] or ""
        node = OutlineNode(role=role, name=unquote(name) if name.startswith('"') else name)
        for attr, attr_value in _ATTR.findall(match["attrs"]):
            if attr == "ref":
                node.ident = attr_value
            else:
                node.props.append((attr, attr_value))
        add_node(roots, stack, indent, node)
        last_text = None
        if value:
            if role == "text" and not node.name:
                node.name = _scalar(value)
                last_text = node
            else:
                last_text = OutlineNode(role="text", name=_scalar(value))
                node.children.append(last_text)
    return roots


def render_aria_yaml(observation: str, *, title: str = "") -> str:
    """The snapshot as nested labelled elements (role badge, styled name, ref, properties)."""
    roots = parse_aria_yaml(observation)
    if not roots:
        return preformatted(observation, title=title, note="empty ARIA snapshot")
    return render_outline(roots, title=title)
