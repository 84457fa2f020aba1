"""Reads for traces: the review view, the annotation queue and aggregates."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, OuterRef, QuerySet

from simulator.domains import ReadAction, get_domain, is_gui
from simulator.review.anchors import AnchorDiff, compare_anchors
from simulator.review.diffing import Diff, diff_observations
from simulator.review.judge import DIMENSIONS, Agreement, agreement, normalize
from studio.core.models import Project
from studio.traces.models import (
    Annotation,
    ImportJob,
    JudgeScore,
    SimulatedTurn,
    Simulation,
    Trace,
    TuringGuess,
)


def trace_list(*, project: Project) -> QuerySet[Trace]:
    return (
        Trace.objects.filter(project=project)
        .annotate(
            turn_count=Count("turns", distinct=True), sim_count=Count("simulations", distinct=True)
        )
        .order_by("-created_at", "-id")
    )


def import_list(*, project: Project) -> QuerySet[ImportJob]:
    return ImportJob.objects.filter(project=project).order_by("-created_at")[:10]


@dataclass
class TurnReview:
    """Everything the side-by-side view shows for one turn."""

    turn: SimulatedTurn
    real: str
    diff: Diff
    anchors: list[AnchorDiff]
    judge: JudgeScore | None
    turing: TuringGuess | None
    annotation: Annotation | None
    gui: bool
    #: The recorded action as the studio reads it (None for a domain it does not know).
    action: ReadAction | None = None

    @property
    def cut_off(self) -> bool:
        """The model stopped at max_tokens: not a malformed answer, a budget too small."""
        return (self.turn.telemetry or {}).get("finish_reason") == "length"

    @property
    def dims(self) -> list[tuple[str, int | None]]:
        """(dimension, the user's current score) for the annotation form."""
        return [(d, getattr(self.annotation, d) if self.annotation else None) for d in DIMENSIONS]


def turn_review(*, turn: SimulatedTurn, user: AbstractBaseUser | AnonymousUser) -> TurnReview:
    domain = turn.simulation.trace.domain
    real = turn.turn.observation
    simulated = turn.observation
    return TurnReview(
        turn=turn,
        real=real,
        diff=diff_observations(real, simulated),
        anchors=compare_anchors(domain, real, simulated),
        judge=turn.judge_scores.order_by("-created_at", "-id").first(),
        turing=turn.turing_guesses.order_by("-created_at", "-id").first(),
        annotation=Annotation.objects.filter(simulated_turn=turn, user_id=user.pk or 0).first(),
        gui=is_gui(domain),
        action=_read_action(domain, turn.turn.action),
    )


def _read_action(domain_name: str, raw: str) -> ReadAction | None:
    try:
        domain = get_domain(domain_name)
    except KeyError:
        return None
    return domain.read_action(raw)


def annotation_queue(*, project: Project) -> QuerySet[SimulatedTurn]:
    """Simulated turns of the project that no one has accepted or rejected yet."""
    judged = Annotation.objects.filter(simulated_turn=OuterRef("pk")).exclude(verdict="")
    return (
        SimulatedTurn.objects.filter(simulation__project=project)
        .exclude(observation="")
        .annotate(has_verdict=Exists(judged))
        .filter(has_verdict=False)
        .select_related("simulation__trace")
        .order_by("simulation__created_at", "simulation_id", "index")
    )


@dataclass
class Row:
    """One line of an aggregate table: mean scores (0–100) per dimension and overall."""

    label: str
    n: int
    scores: dict[str, float | None]
    total: float | None
    human_n: int = 0
    human_total: float | None = None


def _row(label: str, judges: list[JudgeScore], humans: list[Annotation]) -> Row:
    scores: dict[str, float | None] = {}
    for name in DIMENSIONS:
        values = [getattr(j, name) for j in judges if getattr(j, name)]
        scores[name] = normalize(sum(values) / len(values)) if values else None
    totals = [j.mean_score for j in judges if j.mean_score]
    human_values = [getattr(a, d) for a in humans for d in DIMENSIONS if getattr(a, d) is not None]
    return Row(
        label=label,
        n=len(judges),
        scores=scores,
        total=normalize(sum(totals) / len(totals)) if totals else None,
        human_n=len(humans),
        human_total=normalize(sum(human_values) / len(human_values)) if human_values else None,
    )


@dataclass
class Aggregates:
    by_domain: list[Row]
    by_kind: list[Row]
    by_world: list[Row]
    overall: Row
    agreement: dict[str, Agreement]
    turing_n: int
    turing_accuracy: float | None


def aggregates(*, project: Project) -> Aggregates:
    """Judge (latest per turn) and human scores, grouped by domain, perturbation kind and world."""
    turns = list(
        SimulatedTurn.objects.filter(simulation__project=project).select_related(
            "simulation__trace", "simulation__scenario__world"
        )
    )
    latest: dict[int, JudgeScore] = {}
    for score in JudgeScore.objects.filter(
        simulated_turn__simulation__project=project, failed=False
    ).order_by("created_at", "id"):
        latest[score.simulated_turn_id] = score
    humans: dict[int, list[Annotation]] = defaultdict(list)
    for annotation in Annotation.objects.filter(simulated_turn__simulation__project=project):
        humans[annotation.simulated_turn_id].append(annotation)
    groups: dict[str, dict[str, tuple[list[JudgeScore], list[Annotation]]]] = {
        "domain": defaultdict(lambda: ([], [])),
        "kind": defaultdict(lambda: ([], [])),
        "world": defaultdict(lambda: ([], [])),
    }
    all_judges: list[JudgeScore] = []
    all_humans: list[Annotation] = []
    for turn in turns:
        judge = [latest[turn.pk]] if turn.pk in latest else []
        human = humans.get(turn.pk, [])
        all_judges += judge
        all_humans += human
        simulation = turn.simulation
        kinds = sorted({f["kind"] for f in turn.firings}) or ["none"]
        world = (
            simulation.scenario.world.title
            if simulation.scenario is not None
            else simulation.trace.task or simulation.trace.domain
        )
        for group, keys in (
            ("domain", [simulation.trace.domain]),
            ("kind", kinds),
            ("world", [world]),
        ):
            for key in keys:
                groups[group][key][0].extend(judge)
                groups[group][key][1].extend(human)
    pairs: dict[str, list[tuple[float, float]]] = {d: [] for d in (*DIMENSIONS, "all")}
    for turn_id, notes in humans.items():
        judge_score = latest.get(turn_id)
        if judge_score is None:
            continue
        for annotation in notes:
            for name in DIMENSIONS:
                human_value = getattr(annotation, name)
                judge_value = getattr(judge_score, name)
                if human_value is not None and judge_value:
                    pairs[name].append((float(human_value), float(judge_value)))
                    pairs["all"].append((float(human_value), float(judge_value)))
    guesses = list(TuringGuess.objects.filter(simulated_turn__simulation__project=project))
    answered = [g for g in guesses if g.guess]

    def rows(group: str) -> list[Row]:
        return [_row(key, *groups[group][key]) for key in sorted(groups[group])]

    return Aggregates(
        by_domain=rows("domain"),
        by_kind=rows("kind"),
        by_world=rows("world"),
        overall=_row("All", all_judges, all_humans),
        agreement={name: agreement(values) for name, values in pairs.items()},
        turing_n=len(answered),
        turing_accuracy=(sum(g.correct for g in answered) / len(answered)) if answered else None,
    )


def simulation_turns(*, simulation: Simulation) -> list[dict[str, Any]]:
    """Turn list for the review sidebar: index, verdict and latest judge total."""
    return [
        turn_item(turn=turn)
        for turn in simulation.turns.prefetch_related("judge_scores", "annotations")
    ]


def turn_item(*, turn: SimulatedTurn) -> dict[str, Any]:
    """One sidebar entry: the turn, its latest judge score and its reviewers' verdicts."""
    judge = max(turn.judge_scores.all(), key=lambda j: (j.created_at, j.pk), default=None)
    verdicts = {a.verdict for a in turn.annotations.all() if a.verdict}
    return {"turn": turn, "judge": judge, "verdicts": sorted(verdicts)}
