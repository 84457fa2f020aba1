"""AndroidWorld element lists and JSON element arrays as a phone screen.

AndroidWorld agents see ``UI element 3: {"index": 3, "text": "Home", ...}`` or
``UI element 3: UIElement(text='Home', ..., bbox_pixels=BoundingBox(x_min=0, ...))``
lines; other Android tool servers return a JSON array of element objects. Every
element is shown with its index (the number an agent's action names): at its
bounding box when it has one, listed below the screen otherwise.
"""

from __future__ import annotations

import json
import re
from typing import Any

from simulator.render._page import preformatted
from simulator.render._screen import Box, parse_bounds, render_screen

_ELEMENT_LINE = re.compile(r"^\s*UI element (\d{1,9})\s*:\s*(.*)$")
_QUOTED = r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
_STRING_FIELD = re.compile(
    rf"[\"']?(?P<key>text|content_description|hint_text|class_name)[\"']?\s*[:=]\s*(?P<value>{_QUOTED})"
)
_FLAG_FIELD = re.compile(
    r"[\"']?(?:is_)?(clickable|checked|focused|selected|editable)[\"']?\s*[:=]\s*[Tt]rue"
)
_NUMBER = r"(-?\d{1,7}(?:\.\d{1,6})?)"
_COORDINATE = {
    key: re.compile(rf"[\"']?{key}[\"']?\s*[:=]\s*{_NUMBER}")
    for key in ("x_min", "x_max", "y_min", "y_max")
}
_DESCRIPTION_KEYS = ("content_description", "content-desc", "contentDescription", "description")
_FLAG_KEYS = ("clickable", "checked", "focused", "selected", "editable")


def _rect_from_corners(
    x1: float, y1: float, x2: float, y2: float
) -> tuple[float, float, float, float] | None:
    return (x1, y1, x2 - x1, y2 - y1) if x2 >= x1 and y2 >= y1 else None


def _line_rect(fields: str) -> tuple[float, float, float, float] | None:
    start = fields.find("bbox_pixels")
    if start < 0:
        return None
    segment = fields[start : start + 200]
    matches = [_COORDINATE[key].search(segment) for key in ("x_min", "y_min", "x_max", "y_max")]
    if not all(matches):
        return None
    x1, y1, x2, y2 = (float(match[1]) for match in matches if match)
    return _rect_from_corners(x1, y1, x2, y2)


def _line_box(index: str, fields: str) -> Box:
    strings: dict[str, str] = {}
    for match in _STRING_FIELD.finditer(fields):
        strings.setdefault(match["key"], match["value"][1:-1])
    text = strings.get("text", "")
    desc = strings.get("content_description", "")
    return Box(
        label=text or desc or strings.get("hint_text", ""),
        rect=_line_rect(fields),
        detail=desc if text and desc != text else "",
        kind=f"#{index} {strings.get('class_name', '').rsplit('.', 1)[-1]}".strip(),
        flags=frozenset(_FLAG_FIELD.findall(fields)),
    )


def _number(value: Any) -> float | None:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if is_number and abs(value) < 1e7 else None


def _corners(values: list[Any]) -> tuple[float, float, float, float] | None:
    """(x1, y1, x2, y2) numbers -> (x, y, width, height); None unless all four are numbers."""
    numbers = [number for number in map(_number, values) if number is not None]
    if len(numbers) != 4:
        return None
    x1, y1, x2, y2 = numbers
    return _rect_from_corners(x1, y1, x2, y2)


def _json_rect(value: Any) -> tuple[float, float, float, float] | None:
    if isinstance(value, str):
        return parse_bounds(value)
    if isinstance(value, list):
        return _corners(value)
    if isinstance(value, dict):
        for keys in (("x_min", "y_min", "x_max", "y_max"), ("left", "top", "right", "bottom")):
            rect = _corners([value.get(key) for key in keys])
            if rect:
                return rect
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _json_box(position: int, item: dict[str, Any]) -> Box:
    text = _text(item.get("text"))
    desc = next((_text(item[key]) for key in _DESCRIPTION_KEYS if _text(item.get(key))), "")
    index = item.get("index")
    number = index if isinstance(index, int) and not isinstance(index, bool) else position
    kind = _text(item.get("class_name") or item.get("class")).rsplit(".", 1)[-1]
    rect = next(
        (_json_rect(item[key]) for key in ("bbox_pixels", "bbox", "bounds") if key in item), None
    )
    flags = frozenset(
        key for key in _FLAG_KEYS if item.get(key) is True or item.get(f"is_{key}") is True
    )
    return Box(
        label=text or desc,
        rect=rect,
        detail=desc if text and desc != text else "",
        kind=f"#{number} {kind}".strip(),
        flags=flags,
    )


def parse_android_elements(observation: str) -> list[Box]:
    """One box per element of a ``UI element N: ...`` list or a JSON array of objects."""
    stripped = observation.strip()
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except (ValueError, RecursionError):
            items = None
        if isinstance(items, list):
            return [_json_box(i, item) for i, item in enumerate(items) if isinstance(item, dict)]
    boxes = []
    for line in observation.splitlines():
        match = _ELEMENT_LINE.match(line)
        if match:
            boxes.append(_line_box(match[1], match[2]))
    return boxes


def render_android_elements(observation: str, *, title: str = "") -> str:
    """A phone frame with each element at its bounding box (numbered), the rest listed."""
    boxes = parse_android_elements(observation)
    if not boxes:
        return preformatted(observation, title=title, note="no UI elements found")
    return render_screen(boxes, frame="phone", title=title)
