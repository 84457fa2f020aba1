"""The Scores page's SVG charts: the drawing (no database) and the page that shows them."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from studio.traces import services
from studio.traces.charts import LABEL_CHARS, WIDTH, Bar, Point, bar_chart, line_chart
from studio.traces.score_charts import agreement_by_day
from tests.integration.traces.simulations import imported_trace, simulate

SVG = "{http://www.w3.org/2000/svg}"


def test_a_bar_chart_draws_one_bar_per_value_with_escaped_labels():
    svg = bar_chart(
        "Judge <total>",
        [
            Bar("terminal", 62.5, 4),
            Bar('<script>alert("x")</script>', 150.0, 1),
            Bar("web", None),
            Bar("a world whose title is far too long to fit", 0.0, 2),
        ],
    )
    root = ET.fromstring(svg)  # well-formed: every label escaped
    bars = root.findall(f".//{SVG}rect[@class='bar']")
    assert len(bars) == 3  # the bar without a value is a dash, not a bar
    widths = [float(b.get("width", "")) for b in bars]
    assert widths[1] == WIDTH - 150 - 90  # 150 clamps to the full width
    assert widths[0] == pytest.approx(0.625 * widths[1]) and widths[2] == 0
    assert "<script>" not in svg and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in svg
    assert "Judge &lt;total&gt;" in svg
    assert "62.5 <tspan" in svg and "n=4" in svg
    long = "a world whose title is far too long to fit"
    tooltips = [t for t in root.iter(f"{SVG}title") if t.text == long]  # the full label
    assert len(tooltips) == 1  # the label's (its bar's adds the value)
    shown = tooltips[0].tail
    assert shown == long[: LABEL_CHARS - 1] + "…"


def test_an_empty_bar_chart_says_so():
    svg = bar_chart("Nothing", [])
    assert "No scores yet." in svg and 'class="bar"' not in svg
    ET.fromstring(svg)


def test_a_line_chart_draws_a_point_per_day_and_thins_its_labels():
    points = [Point(f"2026-01-{d:02d}", 10.0 * (d % 10), d) for d in range(1, 21)]
    svg = line_chart("Agreement", points)
    root = ET.fromstring(svg)
    assert len(root.findall(f".//{SVG}circle[@class='point']")) == 20
    assert len(root.findall(f".//{SVG}polyline")) == 1
    x_labels = [t.text for t in root.iter(f"{SVG}text") if (t.text or "").startswith("2026")]
    assert 2 <= len(x_labels) <= 9 and x_labels[-1] == "2026-01-20"
    single = line_chart("One", [Point("<day>", 75.0, 3)])
    assert "<polyline" not in single and "&lt;day&gt;: 75.0 (n=3)" in single
    assert "No data yet." in line_chart("None", [])


@pytest.mark.django_db
def test_the_scores_page_shows_the_charts_with_agreement_by_day(signed_in, project, fixtures_dir):
    trace = imported_trace(project, fixtures_dir)
    trace.task = "<img src=x onerror=alert(1)>"
    trace.save()
    simulation = simulate(trace, ["a", "b", "c"])
    first = simulation.turns.get(index=1)
    services.judge_score_save(
        turn=first,
        fields={
            "total_score": 3.0,
            "format": 3,
            "factuality": 3,
            "consistency": 3,
            "realism": 3,
            "quality": 3,
            "failed": 0.0,
        },
        endpoint_label="test",
    )
    signed_in.post(f"/traces/turns/{first.pk}/annotate/", {"format": "5", "factuality": "3"})
    (point,) = agreement_by_day(project=project)
    assert (point.value, point.n) == (75.0, 2)  # |5-3| and |3-3|: mean 1, 1 - 1/4
    page = signed_in.get("/traces/stats/?project=review").content.decode()
    charts = page[page.index('id="score-charts"') :]
    assert len(re.findall(r"<svg ", charts)) == 5
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in charts
    assert "Human–judge agreement by day" in charts and "75.0 (n=2)" in charts
