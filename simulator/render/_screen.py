"""A screen of absolutely positioned, labelled boxes: what desktop and Android trees render to.

GUI observations give each element a rectangle in screen pixels. Drawing the
rectangles to scale inside a desktop or phone frame shows the layout the agent
would act on; elements without a rectangle are listed below the screen so that
nothing the observation says is hidden.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from simulator.render._page import esc, page

# Frame widths in CSS pixels; the screen's own size is scaled to fit them.
FRAME_WIDTHS = {"phone": 360, "desktop": 960}
# State flags a box can show (class names: the only observation-driven attributes).
BOUNDS = re.compile(r"\s*\[(-?\d{1,7}),(-?\d{1,7})\]\[(-?\d{1,7}),(-?\d{1,7})\]\s*")
FLAGS = ("clickable", "checked", "focused", "selected", "disabled", "editable")

CSS = """
.frame{margin:0 auto;background:#1f2328;padding:12px}
.frame.phone{width:384px;border-radius:28px;padding:36px 12px 44px}
.frame.desktop{width:984px;border-radius:6px}
.screen{position:relative;overflow:hidden;background:#fff;margin:0 auto}
.box{position:absolute;border:1px solid rgba(9,105,218,.45);background:rgba(221,244,255,.35);
overflow:hidden;font-size:10px;line-height:1.2;padding:1px 2px;color:#1f2328}
.box.clickable{border-color:#1a7f37;background:rgba(218,251,225,.4)}
.box.focused{outline:2px solid #cf222e;z-index:1}
.box.selected,.box.checked{background:rgba(255,235,160,.55)}
.box.disabled{opacity:.5}
.box.editable{border-style:dashed}
.box .kind{display:block;font-size:8px;color:#57606a}
.box .desc{display:block;font-style:italic;color:#57606a}
.unplaced{margin:12px auto;max-width:984px;font-size:12px}
.unplaced li .kind{color:#57606a;font-size:11px;margin-right:4px}
"""


@dataclass(frozen=True)
class Box:
    """One element; ``rect`` is (x, y, width, height) in screen pixels, None when unknown."""

    label: str
    rect: tuple[float, float, float, float] | None = None
    detail: str = ""  # a second text (e.g. content-desc beside text)
    kind: str = ""  # the element's class or role, shown small
    flags: frozenset[str] = frozenset()


def parse_bounds(bounds: str) -> tuple[float, float, float, float] | None:
    """``[x1,y1][x2,y2]`` -> (x, y, width, height); None when malformed or inverted."""
    match = BOUNDS.fullmatch(bounds)
    if match is None:
        return None
    x1, y1, x2, y2 = (int(group) for group in match.groups())
    if x2 < x1 or y2 < y1:
        return None
    return float(x1), float(y1), float(x2 - x1), float(y2 - y1)


def _px(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") + "px"


def _box_body(box: Box) -> str:
    parts = []
    if box.kind:
        parts.append(f'<span class="kind">{esc(box.kind)}</span>')
    parts.append(f'<span class="label">{esc(box.label)}</span>')
    if box.detail:
        parts.append(f'<span class="desc">{esc(box.detail)}</span>')
    return "".join(parts)


def screen_size(boxes: Sequence[Box]) -> tuple[float, float]:
    """The screen's extent: the furthest right and bottom edge of any box (at least 1x1)."""
    rects = [box.rect for box in boxes if box.rect]
    width = max((x + w for x, _, w, _ in rects), default=1.0)
    height = max((y + h for _, y, _, h in rects), default=1.0)
    return max(width, 1.0), max(height, 1.0)


def render_screen(boxes: Sequence[Box], *, frame: str, title: str, note: str = "") -> str:
    """The document: boxes with a rectangle scaled into the frame, the rest listed below.

    ``note`` is the renderer's own remark (e.g. that the input was salvaged), escaped.
    """
    width, height = screen_size(boxes)
    scale = FRAME_WIDTHS[frame] / width
    out = [f'<p class="note">{esc(note)}</p>'] if note else []
    out += [
        f'<div class="frame {frame}"><div class="screen" '
        f'style="width:{_px(width * scale)};height:{_px(height * scale)}">'
    ]
    unplaced = []
    for box in boxes:
        if box.rect is None:
            unplaced.append(box)
            continue
        x, y, w, h = box.rect
        classes = " ".join(["box", *sorted(box.flags & frozenset(FLAGS))])
        out.append(
            f'<div class="{classes}" style="left:{_px(x * scale)};top:{_px(y * scale)};'
            f'width:{_px(w * scale)};height:{_px(h * scale)}">{_box_body(box)}</div>\n'
        )
    out.append("</div></div>")
    if unplaced:
        out.append('<ol class="unplaced">')
        out.extend(f'<li class="item">{_box_body(box)}</li>' for box in unplaced)
        out.append("</ol>")
    return page("".join(out), title=title, css=CSS)
