"""Agreement within an annotation queue: between its annotators, and with the judge.

Only the work the queue asked for counts: each annotator's annotation of the
items assigned to them. Verdicts (accept/reject) are nominal, so people are
compared by Krippendorff's α over all of them (any number per item, unfinished
items included) and by Cohen's κ pair by pair. The 1–5 scores are numbers, so
people are compared by α with the interval metric, and each person against the
judge's latest verdict on the turn by quadratic-weighted κ (4 against 5 is
nearly agreement; 1 against 5 is not). Every figure comes with its ``n``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

from django.contrib.auth.models import User

from simulator.review.agreement import Figure, cohen_kappa, krippendorff_alpha, weighted_kappa
from simulator.review.judge import DIMENSIONS
from studio.traces.models import Annotation, AnnotationQueue, JudgeScore, QueueAssignment


@dataclass(frozen=True)
class PairFigure:
    """Cohen's κ of two annotators' verdicts on the items both decided."""

    first: User
    second: User
    kappa: Figure


@dataclass(frozen=True)
class DimensionFigures:
    """One score dimension (or ``all`` of them pooled): people together, and people vs judge."""

    name: str
    humans: Figure
    judge: Figure


@dataclass(frozen=True)
class QueueAgreement:
    verdict_alpha: Figure
    pairs: list[PairFigure]
    dimensions: list[DimensionFigures]


def queue_agreement(*, queue: AnnotationQueue) -> QueueAgreement:
    assigned = set(
        QueueAssignment.objects.filter(item__queue=queue).values_list(
            "item__simulated_turn_id", "user_id"
        )
    )
    turn_ids = {turn for turn, _ in assigned}
    annotations = [
        a
        for a in Annotation.objects.filter(simulated_turn_id__in=turn_ids).select_related("user")
        if (a.simulated_turn_id, a.user_id) in assigned
    ]
    judges: dict[int, JudgeScore] = {}
    for score in JudgeScore.objects.filter(simulated_turn_id__in=turn_ids, failed=False).order_by(
        "created_at", "id"
    ):
        judges[score.simulated_turn_id] = score  # the latest wins
    by_turn: dict[int, list[Annotation]] = defaultdict(list)
    for annotation in annotations:
        by_turn[annotation.simulated_turn_id].append(annotation)
    return QueueAgreement(
        verdict_alpha=krippendorff_alpha(
            [[a.verdict for a in notes if a.verdict] for notes in by_turn.values()]
        ),
        pairs=_pairs(by_turn),
        dimensions=[_dimension(name, by_turn, judges) for name in (*DIMENSIONS, "all")],
    )


def _pairs(by_turn: dict[int, list[Annotation]]) -> list[PairFigure]:
    verdicts: dict[int, dict[int, str]] = defaultdict(dict)
    users: dict[int, User] = {}
    for turn, notes in by_turn.items():
        for a in notes:
            if a.verdict:
                verdicts[a.user_id][turn] = a.verdict
                users[a.user_id] = a.user
    figures = []
    for first, second in combinations(sorted(users, key=lambda pk: users[pk].username), 2):
        shared = sorted(set(verdicts[first]) & set(verdicts[second]))
        if shared:
            pairs = [(verdicts[first][t], verdicts[second][t]) for t in shared]
            figures.append(PairFigure(users[first], users[second], cohen_kappa(pairs)))
    return figures


def _dimension(
    name: str, by_turn: dict[int, list[Annotation]], judges: dict[int, JudgeScore]
) -> DimensionFigures:
    names = DIMENSIONS if name == "all" else (name,)
    units: list[list[float]] = []
    with_judge: list[tuple[float, float]] = []
    for turn, notes in by_turn.items():
        judge = judges.get(turn)
        for dimension in names:
            scores = [float(v) for a in notes if (v := getattr(a, dimension)) is not None]
            units.append(scores)
            judged = getattr(judge, dimension) if judge is not None else 0
            if judged:  # 0: the judge did not score this dimension
                with_judge.extend((score, float(judged)) for score in scores)
    return DimensionFigures(
        name, krippendorff_alpha(units, metric="interval"), weighted_kappa(with_judge)
    )
