"""A reviewer's annotation of a simulated turn: scores, tags, a note, a verdict."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from simulator.review.judge import DIMENSIONS
from studio.errors import RejectedInput
from studio.traces.models import Annotation, SimulatedTurn


def annotation_save(*, turn: SimulatedTurn, user: Any, data: dict[str, Any]) -> Annotation:
    """Create or update the user's annotation of ``turn`` with the fields in ``data``."""
    annotation, _ = Annotation.objects.get_or_create(simulated_turn=turn, user=user)
    for name in DIMENSIONS:
        if name in data:
            annotation.__dict__[name] = _score(name, data[name])
    if "tags" in data:
        tags = data["tags"]
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",")]
        annotation.tags = [t for t in tags if t][:20]
    for name in ("note", "corrected_observation"):
        if name in data:
            setattr(annotation, name, str(data[name]))
    if "verdict" in data and data["verdict"] in ("", "accept", "reject"):
        annotation.verdict = data["verdict"]
    try:
        annotation.full_clean(exclude=["simulated_turn", "user"])
    except ValidationError as exc:
        raise RejectedInput("; ".join(exc.messages)) from exc
    annotation.save()
    return annotation


def _score(name: str, value: Any) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RejectedInput(f"{name}: scores are whole numbers from 1 to 5") from None
