"""Plot a scale sweep, so that a reader sees where the studio bends as sessions grow.

Reads the JSON that ``benchmarks/scale.py --sweep`` writes and draws two panels against
the concurrency N (log scale, base 2):

* throughput: the studio's env-API steps/s per mode, and the raw client's requests/s
  to the same test server measured in the same run (one grey line per run), log y.
  Their ratio at an N is that N's P2;
* latency, log y: the studio's added latency per mode (step percentile minus the raw
  request percentile at the same N, as scale.py defines it; p50 solid, p95 dashed), and
  the raw client's own p50 and p95 in grey, for scale.

A hollow marker is a lower bound: calls of that phase timed out or were still running
when the window's grace period ended, so their latency is missing from the percentiles. An added
latency of zero or less (noise, at small N) has no place on a log axis and is left out.

    .venv/bin/python benchmarks/plot_sweep.py   # var/scale-sweep.json -> docs/img/scale-sweep.png
    .venv/bin/python benchmarks/plot_sweep.py /tmp/sweep.json --out /tmp/sweep.png

It draws with matplotlib's Agg backend (no display needed). It is not a benchmark:
``make bench`` (benchmarks/run_all.py) skips it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_JSON = ROOT / "var" / "scale-sweep.json"
DEFAULT_PNG = ROOT / "docs" / "img" / "scale-sweep.png"
MODE_COLOURS = {"production": "tab:blue", "embedded": "tab:orange"}
RAW_COLOUR = "0.55"


@dataclass(frozen=True)
class Point:
    """One mode and size of the sweep (a row of scale.py's JSON, the fields drawn here)."""

    mode: str
    n: int
    raw_req_per_s: float
    studio_steps_per_s: float
    raw_p50_ms: float | None
    raw_p95_ms: float | None
    added_p50_ms: float | None
    added_p95_ms: float | None
    raw_unfinished: int  # calls cut or timed out: their latency is unknown
    studio_unfinished: int

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> Point:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


def load(path: Path) -> tuple[dict[str, Any], list[Point]]:
    document = json.loads(path.read_text())
    return document["meta"], [Point.from_json(row) for row in document["rows"]]


def _series(
    ax: Axes,
    points: list[Point],
    value: str,
    lower_bound: str | None,
    *,
    colour: str,
    style: str,
    marker: str,
    label: str | None,
    width: float = 2.0,
) -> None:
    """One line over the points with a positive ``value``; hollow markers where the
    point's ``lower_bound`` count (its calls cut or timed out) is non-zero."""
    drawn = [p for p in points if (getattr(p, value) or 0) > 0]
    if not drawn:
        return
    xs = [p.n for p in drawn]
    ys = [float(getattr(p, value)) for p in drawn]
    ax.plot(xs, ys, color=colour, linestyle=style, linewidth=width, label=label)
    for x, y, point in zip(xs, ys, drawn, strict=True):
        hollow = lower_bound is not None and getattr(point, lower_bound) > 0
        ax.plot(
            [x], [y], marker=marker, color=colour, markerfacecolor="white" if hollow else colour
        )


def _plain(value: float) -> str:
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _two_or_five(value: float) -> str:
    """Minor log ticks labelled at 2 and 5 times a power of ten, so that a curve lying
    between two decades can still be read."""
    mantissa = value / 10 ** math.floor(math.log10(value))
    return _plain(value) if min(abs(mantissa - 2), abs(mantissa - 5)) < 1e-6 else ""


def _axes_style(ax: Axes, sizes: list[int], ylabel: str, title: str) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, labels=[f"{n:,}" for n in sizes])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: _plain(value)))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda value, _pos: _two_or_five(value)))
    ax.set_xlabel("concurrent sessions N")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", axis="y", alpha=0.1)


def draw(meta: dict[str, Any], points: list[Point]) -> Figure:
    modes = list(dict.fromkeys(p.mode for p in points))
    sizes = sorted({p.n for p in points})
    fig = Figure(figsize=(13, 5.4), layout="constrained")
    FigureCanvasAgg(fig)
    throughput, latency = fig.subplots(1, 2)
    for index, mode in enumerate(modes):
        mine = sorted((p for p in points if p.mode == mode), key=lambda p: p.n)
        colour = MODE_COLOURS.get(mode, f"C{index + 2}")
        raw_label = "raw client (one line per run)" if index == 0 else None
        _series(throughput, mine, "raw_req_per_s", None, colour=RAW_COLOUR, style="--",
                marker="s", label=raw_label, width=1.2)  # fmt: skip
        _series(throughput, mine, "studio_steps_per_s", None, colour=colour,
                style="-", marker="o", label=f"studio steps/s, {mode}")  # fmt: skip
        _series(latency, mine, "raw_p50_ms", "raw_unfinished", colour=RAW_COLOUR, style="-",
                marker="o", label="raw client p50" if index == 0 else None, width=1.2)  # fmt: skip
        _series(latency, mine, "raw_p95_ms", "raw_unfinished", colour=RAW_COLOUR, style="--",
                marker="^", label="raw client p95" if index == 0 else None, width=1.2)  # fmt: skip
        _series(latency, mine, "added_p50_ms", "studio_unfinished", colour=colour, style="-",
                marker="o", label=f"added p50, {mode}")  # fmt: skip
        _series(latency, mine, "added_p95_ms", "studio_unfinished", colour=colour, style="--",
                marker="^", label=f"added p95, {mode}")  # fmt: skip
    _axes_style(throughput, sizes, "per second", "Throughput: studio steps/s vs raw requests/s")
    _axes_style(
        latency, sizes, "ms", "Latency: added by the studio (studio − raw, same N); raw in grey"
    )
    throughput.legend(loc="best", fontsize="small")
    latency.legend(loc="best", fontsize="small")
    fig.suptitle(
        f"World Studio env API against the protocol test server "
        f"({meta['test_server_latency_ms']} ms per model call)"
    )
    fig.supxlabel(
        f"{meta['date']}, commit {meta['commit']}; {meta['seconds']:.0f} s windows, "
        f"{meta['timeout']:.0f} s per-call timeout, {meta['grace']:.0f} s grace after them; "
        f"{meta['cores']} cores, load {meta['load_at_start']:.1f} at start; "
        f"production: {meta['production']}.\n"
        "Hollow marker: some calls timed out or were still running when the window's grace "
        "period ended, so that latency is a lower bound.",
        fontsize="small",
        color="0.35",
    )
    return fig


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", type=Path, nargs="?", default=DEFAULT_JSON,
                        help="rows written by scale.py --sweep")  # fmt: skip
    parser.add_argument("--out", type=Path, default=DEFAULT_PNG, help="the PNG to write")
    args = parser.parse_args()
    if not args.json.exists():
        print(f"{args.json} does not exist: run benchmarks/scale.py --sweep first", file=sys.stderr)
        return 1
    meta, points = load(args.json)
    if not points:
        print(f"{args.json} has no rows", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    draw(meta, points).savefig(args.out, dpi=110)
    print(f"{len(points)} rows from {args.json} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
