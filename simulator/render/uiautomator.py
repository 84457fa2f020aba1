"""Android ``uiautomator dump`` XML as a phone screen of the elements that show text.

Each ``<node>`` with a ``text`` or ``content-desc`` becomes a box at its
``bounds="[x1,y1][x2,y2]"``. A model's dump is often cut short, so when the XML
does not parse the nodes are still read tag by tag; XML with declarations is
never parsed at all (shown as text).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping

from simulator.render._page import preformatted
from simulator.render._screen import Box, parse_bounds, render_screen
from simulator.render._xml import DECLARATIONS, REFUSED_NOTE, parse_xml
from simulator.render.android_elements import render_android_elements

_NODE_TAG = re.compile(r"<node((?:\s+[\w:.-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*/?>")
_ATTRIBUTE = re.compile(r"([\w:.-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
# uiautomator attribute -> the box flag it sets when "true".
_FLAG_ATTRIBUTES = {
    "clickable": "clickable",
    "checked": "checked",
    "focused": "focused",
    "selected": "selected",
}


def _salvaged_nodes(text: str) -> list[dict[str, str]]:
    """Attributes of every ``<node ...>`` tag, for dumps that are cut short or malformed."""
    return [
        {
            name: html.unescape(double or single)
            for name, double, single in _ATTRIBUTE.findall(match[1])
        }
        for match in _NODE_TAG.finditer(text)
    ]


def node_boxes(nodes: Iterable[Mapping[str, str]]) -> list[Box]:
    """One box per node that has a text or a content-desc, in document order."""
    boxes = []
    for node in nodes:
        text = node.get("text", "").strip()
        desc = node.get("content-desc", "").strip()
        if not text and not desc:
            continue
        flags = frozenset(
            flag for attr, flag in _FLAG_ATTRIBUTES.items() if node.get(attr) == "true"
        )
        if node.get("enabled") == "false":
            flags |= {"disabled"}
        kind = node.get("class", "").rsplit(".", 1)[-1]
        boxes.append(
            Box(
                label=text or desc,
                rect=parse_bounds(node.get("bounds", "")),
                detail=desc if text and desc != text else "",
                kind=kind,
                flags=flags,
            )
        )
    return boxes


def render_uiautomator_xml(observation: str, *, title: str = "") -> str:
    """A phone frame with a box for every node that shows text, at its bounds, to scale."""
    if DECLARATIONS.search(observation):
        return preformatted(observation, title=title, note=REFUSED_NOTE)
    note = ""
    try:
        nodes: list[dict[str, str]] = [dict(n.attrib) for n in parse_xml(observation).iter("node")]
    except ValueError:
        nodes = _salvaged_nodes(observation)
        note = "the XML does not parse; its node tags were read one by one"
    if not nodes:
        # Not a dump at all: an AndroidWorld element list or JSON array is the other shape.
        return render_android_elements(observation, title=title)
    boxes = node_boxes(nodes)
    if not boxes:
        return preformatted(observation, title=title, note="no node shows any text")
    return render_screen(boxes, frame="phone", title=title, note=note)
