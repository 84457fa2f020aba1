"""The Scores page's charts: judge scores by dimension, domain, perturbation kind and
world, and human–judge agreement day by day (drawn by :mod:`studio.traces.charts`).

Agreement on a day is ``100 × (1 − mean |human − judge| / 4)`` over the dimension
scores annotated that day, each against the latest judge score of its turn: 100
when every human score equals the judge's, 0 when they are always 4 apart.
"""

from __future__ import annotations

from collections import defaultdict

from django.utils.safestring import SafeString, mark_safe

from simulator.review.judge import DIMENSIONS
from studio.core.models import Project
from studio.traces.charts import Bar, Point, bar_chart, line_chart
from studio.traces.models import Annotation, JudgeScore
from studio.traces.selectors import Aggregates, Row


def _bars(rows: list[Row]) -> list[Bar]:
    return [Bar(row.label, row.total, row.n) for row in rows]


def agreement_by_day(*, project: Project) -> list[Point]:
    """One point per day with annotations that can be paired with a judge score."""
    latest: dict[int, JudgeScore] = {}
    for score in JudgeScore.objects.filter(
        simulated_turn__simulation__project=project, failed=False
    ).order_by("created_at", "id"):
        latest[score.simulated_turn_id] = score
    gaps: dict[str, list[int]] = defaultdict(list)
    for annotation in Annotation.objects.filter(
        simulated_turn__simulation__project=project, simulated_turn_id__in=list(latest)
    ):
        judge = latest[annotation.simulated_turn_id]
        for name in DIMENSIONS:
            human, machine = getattr(annotation, name), getattr(judge, name)
            if human is not None and machine:
                gaps[annotation.updated_at.date().isoformat()].append(abs(human - machine))
    return [
        Point(day, 100 * (1 - sum(values) / len(values) / 4), len(values))
        for day, values in sorted(gaps.items())
    ]


def score_charts(*, project: Project, aggregates: Aggregates) -> dict[str, SafeString]:
    """Each chart as inline SVG; safe to mark because :mod:`charts` escapes every label."""
    dimensions = [
        Bar(name.capitalize(), aggregates.overall.scores.get(name), aggregates.overall.n)
        for name in DIMENSIONS
    ]
    charts = {
        "dimension": bar_chart("Judge score by dimension (0–100)", dimensions),
        "domain": bar_chart("Judge total by domain", _bars(aggregates.by_domain)),
        "kind": bar_chart("Judge total by perturbation kind", _bars(aggregates.by_kind)),
        "world": bar_chart("Judge total by world", _bars(aggregates.by_world)),
        "agreement": line_chart(
            "Human–judge agreement by day (100 = same scores)", agreement_by_day(project=project)
        ),
    }
    return {name: mark_safe(svg) for name, svg in charts.items()}
