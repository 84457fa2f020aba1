"""Desktop accessibility trees (OSWorld style) as a screen of positioned, labelled boxes.

Three shapes are read: OSWorld's tab-separated table (header ``tag, name, text,
class, description, position (top-left x&y), size (w&h)``), an indented tree of
``role 'name' (x, y, w, h)`` lines, and OSWorld's raw XML (``<desktop-frame>``
with ``screencoord``/``size`` attributes). Anything else is shown as text.
"""

from __future__ import annotations

import re

from simulator.quoting import QUOTED, unquote
from simulator.render._page import preformatted
from simulator.render._screen import Box, render_screen
from simulator.render._xml import DECLARATIONS, REFUSED_NOTE, parse_xml

_PAIR = re.compile(r"\(\s*(-?\d{1,7})\s*,\s*(-?\d{1,7})\s*\)")
_TREE_LINE = re.compile(
    rf"(?P<role>[^\s'\"(]+(?: [^\s'\"(]+)*?)(?:\s+(?P<name>{QUOTED}))?"
    r"(?:\s*\(\s*(?P<x>-?\d{1,7}),\s*(?P<y>-?\d{1,7}),\s*(?P<w>\d{1,7}),\s*(?P<h>\d{1,7})\s*\))?\s*$"
)


def _pair(text: str) -> tuple[float, float] | None:
    match = _PAIR.fullmatch(text.strip())
    return (float(match[1]), float(match[2])) if match else None


def _rect(position: str, size: str) -> tuple[float, float, float, float] | None:
    corner, extent = _pair(position), _pair(size)
    if corner is None or extent is None or min(extent) < 0:
        return None
    return (*corner, *extent)


def _table_boxes(lines: list[str]) -> list[Box]:
    boxes = []
    for line in lines[1:]:
        if not line.strip():
            continue
        cells = line.split("\t")
        tag, name, text = (cells + ["", "", ""])[:3]
        rect = _rect(cells[-2], cells[-1]) if len(cells) >= 7 else None
        boxes.append(
            Box(
                label=name or text,
                rect=rect,
                detail=text if name and text != name else "",
                kind=tag,
            )
        )
    return boxes


def _tree_boxes(lines: list[str]) -> list[Box]:
    boxes = []
    for line in lines:
        if not line.strip():
            continue
        match = _TREE_LINE.fullmatch(line.strip())
        if match is None:
            boxes.append(Box(label=line.strip()))
            continue
        rect = None
        if match["x"] is not None:
            rect = (float(match["x"]), float(match["y"]), float(match["w"]), float(match["h"]))
        name = match["name"]
        boxes.append(Box(label=unquote(name) if name else "", rect=rect, kind=match["role"]))
    return boxes


def _xml_boxes(text: str) -> list[Box]:
    boxes = []
    for element in parse_xml(text).iter():
        attributes = {key.rsplit("}", 1)[-1]: value for key, value in element.attrib.items()}
        name = attributes.get("name", "")
        content = (element.text or "").strip()
        if not name and not content:
            continue
        rect = _rect(attributes.get("screencoord", ""), attributes.get("size", ""))
        tag = element.tag.rsplit("}", 1)[-1]
        detail = content if name and content != name else ""
        boxes.append(Box(label=name or content, rect=rect, detail=detail, kind=tag))
    return boxes


def parse_os_a11y(observation: str) -> list[Box]:
    """One box per element of the table, tree or XML; ValueError for XML that cannot be read."""
    lines = observation.strip("\n").splitlines()
    if lines and lines[0].startswith("tag\tname"):
        return _table_boxes(lines)
    if observation.lstrip().startswith("<"):
        return _xml_boxes(observation)
    return _tree_boxes(lines)


def render_os_a11y(observation: str, *, title: str = "") -> str:
    """A desktop frame with each element at its position and size, to scale."""
    if DECLARATIONS.search(observation):
        return preformatted(observation, title=title, note=REFUSED_NOTE)
    try:
        boxes = parse_os_a11y(observation)
    except ValueError as error:
        return preformatted(observation, title=title, note=str(error))
    if not any(box.rect for box in boxes):
        return preformatted(observation, title=title, note="no element has a position")
    return render_screen(boxes, frame="desktop", title=title)
