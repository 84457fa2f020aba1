"""Server-side SVG charts: labelled horizontal bars, and a line over time.

Drawn as inline SVG so the Scores page needs no chart library, no CDN and no
script. Every label and title is escaped here (they hold world titles and other
user text), which is why the callers may mark the result safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 520
LABEL_W = 150
VALUE_W = 90
ROW_H = 22
TOP = 28
AXIS_H = 18
LABEL_CHARS = 24
ACCENT = "#3355ff"
MUTED = "#667085"
GRID = "#e3e6eb"
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


@dataclass(frozen=True)
class Bar:
    """One bar: ``value`` on 0..maximum, None when there is nothing to show yet."""

    label: str
    value: float | None
    n: int = 0


@dataclass(frozen=True)
class Point:
    """One point of a line over time: ``label`` on the x axis (a date), ``value`` on y."""

    label: str
    value: float
    n: int = 0


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _open(title: str, height: int) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" role="img" aria-label="{escape(title)}" {FONT}>'
        f"<title>{escape(title)}</title>"
        f'<text x="0" y="16" font-weight="600" fill="#1d2330">{escape(title)}</text>'
    )


def _number(value: float) -> str:
    return f"{value:.1f}"


def bar_chart(title: str, bars: Sequence[Bar], *, maximum: float = 100.0) -> str:
    """Horizontal bars, one row per bar: label, bar, value and the count behind it."""
    plot_w = WIDTH - LABEL_W - VALUE_W
    height = TOP + max(len(bars), 1) * ROW_H + AXIS_H
    parts = [_open(title, height)]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = LABEL_W + tick * plot_w
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{height - AXIS_H}" stroke="{GRID}"/>'
            f'<text x="{x:.1f}" y="{height - 4}" fill="{MUTED}" text-anchor="middle">'
            f"{_number(tick * maximum).removesuffix('.0')}</text>"
        )
    if not bars:
        parts.append(f'<text x="{LABEL_W + 8}" y="{TOP + 15}" fill="{MUTED}">No scores yet.</text>')
    for row, bar in enumerate(bars):
        y = TOP + row * ROW_H
        label = escape(bar.label)
        parts.append(
            f'<text x="{LABEL_W - 8}" y="{y + 15}" text-anchor="end" fill="#1d2330">'
            f"<title>{label}</title>{escape(_short(bar.label))}</text>"
        )
        if bar.value is None:
            parts.append(f'<text x="{LABEL_W + 8}" y="{y + 15}" fill="{MUTED}">—</text>')
            continue
        share = max(0.0, min(1.0, bar.value / maximum)) if maximum else 0.0
        width = share * plot_w
        parts.append(
            f'<rect class="bar" x="{LABEL_W}" y="{y + 4}" width="{width:.1f}" height="{ROW_H - 8}" '
            f'rx="3" fill="{ACCENT}"><title>{label}: {_number(bar.value)} '
            f"(n={bar.n})</title></rect>"
            f'<text class="value" x="{LABEL_W + plot_w + 6}" y="{y + 15}" fill="#1d2330">'
            f'{_number(bar.value)} <tspan fill="{MUTED}">n={bar.n}</tspan></text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def line_chart(title: str, points: Sequence[Point], *, maximum: float = 100.0) -> str:
    """A line through ``points`` in order, each a dot with its value and count as a tooltip;
    at most nine x labels are written, evenly spread."""
    height = 200
    # Half a date label (~35 px) of room at either end, so the first and last fit.
    left, right, top, bottom = 72, WIDTH - 40, TOP + 6, height - AXIS_H - 6
    parts = [_open(title, height)]
    for tick in (0.0, 0.5, 1.0):
        y = bottom - tick * (bottom - top)
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{GRID}"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" fill="{MUTED}" text-anchor="end">'
            f"{_number(tick * maximum).removesuffix('.0')}</text>"
        )
    if not points:
        parts.append(f'<text x="{left + 8}" y="{top + 40}" fill="{MUTED}">No data yet.</text>')
        parts.append("</svg>")
        return "".join(parts)
    step = (right - left) / max(len(points) - 1, 1)
    coords = []
    for i, point in enumerate(points):
        share = max(0.0, min(1.0, point.value / maximum)) if maximum else 0.0
        x = left + i * step if len(points) > 1 else (left + right) / 2
        coords.append((x, bottom - share * (bottom - top)))
    if len(coords) > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{ACCENT}" stroke-width="2"/>')
    every = max(1, -(-len(points) // 8))
    for i, (point, (x, y)) in enumerate(zip(points, coords, strict=True)):
        label = escape(point.label)
        parts.append(
            f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{ACCENT}">'
            f"<title>{label}: {_number(point.value)} (n={point.n})</title></circle>"
        )
        last = len(points) - 1
        if i == last or (i % every == 0 and last - i >= every):  # never crowding the last
            parts.append(
                f'<text x="{x:.1f}" y="{height - 4}" fill="{MUTED}" text-anchor="middle">'
                f"{label}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)
