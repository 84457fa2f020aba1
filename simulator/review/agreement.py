"""Chance-corrected agreement between raters: Cohen's κ and Krippendorff's α.

:func:`simulator.review.judge.agreement` says how *close* two raters' 1–5 scores
are (mean difference, correlations). It cannot say whether two annotators agree
more than chance would make them: two people who accept 95% of turns agree on
most turns by luck alone. The figures here correct for that, which is what an
annotation queue needs to tell a clear guideline from a coin toss.

- :func:`cohen_kappa`: two raters, nominal labels (accept/reject);
- :func:`weighted_kappa`: two raters, numeric labels (a human's 1–5 score against
  the judge's), where 4 against 5 is a smaller disagreement than 1 against 5;
- :func:`krippendorff_alpha`: any number of raters per item, some items rated by
  only some of them (a queue with k annotators per item and unfinished work).

Every figure carries ``n``, the number of items (or pairs) behind it, and is None
when it is undefined: no items, or no variation to correct for (every label the same).
All three are written as ``1 - observed disagreement / expected disagreement``,
so one distance function decides nominal against numeric.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

Distance = Callable[[Hashable, Hashable], float]


@dataclass(frozen=True)
class Figure:
    """One agreement figure and what it rests on.

    ``n`` counts items for κ (one pair of labels each) and pairable units for α
    (items with at least two labels); ``values`` counts the labels used.
    """

    value: float | None
    n: int
    values: int


def nominal(a: Hashable, b: Hashable) -> float:
    """Labels either match or they do not."""
    return 0.0 if a == b else 1.0


def interval(a: Hashable, b: Hashable) -> float:
    """Squared difference of numeric labels (quadratic weights, α's interval metric)."""
    return (float(a) - float(b)) ** 2  # type: ignore[arg-type]


def _chance_corrected(observed: float, expected: float) -> float | None:
    return None if expected == 0 else 1 - observed / expected


def _kappa(pairs: Sequence[tuple[Hashable, Hashable]], distance: Distance) -> Figure:
    n = len(pairs)
    if n == 0:
        return Figure(None, 0, 0)
    firsts = Counter(a for a, _ in pairs)
    seconds = Counter(b for _, b in pairs)
    observed = sum(distance(a, b) for a, b in pairs) / n
    expected = sum(firsts[a] * seconds[b] * distance(a, b) for a in firsts for b in seconds) / (
        n * n
    )
    return Figure(_chance_corrected(observed, expected), n, 2 * n)


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> Figure:
    """Cohen's κ of two raters' nominal labels, one (first, second) pair per item.

    ``(p_o - p_e) / (1 - p_e)`` with ``p_e`` from each rater's own label frequencies.
    """
    return _kappa(pairs, nominal)


def weighted_kappa(pairs: Sequence[tuple[float, float]]) -> Figure:
    """Cohen's κ with quadratic weights, for numeric labels such as 1–5 scores."""
    return _kappa(pairs, interval)


def krippendorff_alpha(
    units: Sequence[Sequence[Hashable]], *, metric: Literal["nominal", "interval"] = "nominal"
) -> Figure:
    """Krippendorff's α over items each labelled by any number of raters.

    ``units`` holds each item's labels (missing ratings simply left out). Items with
    fewer than two labels cannot show agreement or disagreement and are dropped, as
    the coefficient prescribes. Observed disagreement is the mean over pairable
    labels of their within-item disagreement; expected disagreement is that of all
    pairable labels pooled.
    """
    distance = nominal if metric == "nominal" else interval
    pairable = [list(unit) for unit in units if len(unit) >= 2]
    n = sum(len(unit) for unit in pairable)
    if n == 0:
        return Figure(None, 0, 0)
    within = 0.0
    for unit in pairable:
        spread = sum(
            distance(a, b) for i, a in enumerate(unit) for j, b in enumerate(unit) if i != j
        )
        within += spread / (len(unit) - 1)
    observed = within / n
    counts = Counter(value for unit in pairable for value in unit)
    expected = sum(counts[a] * counts[b] * distance(a, b) for a in counts for b in counts) / (
        n * (n - 1)
    )
    return Figure(_chance_corrected(observed, expected), len(pairable), n)
