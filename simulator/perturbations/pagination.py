"""Pagination: only the first page of a list comes back, with a cursor."""

from __future__ import annotations

from typing import Any

from simulator.perturbations.registry import Enforced, KindInfo, Param
from simulator.perturbations.shapes import NotJson, dump_json, load_json
from simulator.perturbations.spec import Perturbation, StepContext


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    return (
        f"Results are paginated: return at most {p.param('page_size')} items and include a "
        f"'{p.param('cursor_key')}' value the agent must pass to get the next page."
    )


def _cursor(ctx: StepContext) -> str:
    return f"page-2-step-{ctx.step}"


def _paginate(data: Any, size: int, key: str, cursor: str) -> tuple[Any, int] | None:
    """The first page of ``data`` and the number of items held back, or None."""
    if isinstance(data, list):
        if len(data) <= size:
            return None
        return {"items": data[:size], key: cursor}, len(data) - size
    if isinstance(data, dict):
        for name, value in data.items():
            if isinstance(value, list) and len(value) > size:
                page = dict(data)
                page[name] = value[:size]
                page[key] = cursor
                return page, len(value) - size
    return None


def _enforce(p: Perturbation, observation: str, ctx: StepContext) -> Enforced:
    size = int(p.param("page_size"))
    key = str(p.param("cursor_key"))
    data = load_json(observation)
    if not isinstance(data, NotJson):
        paged = _paginate(data, size, key, _cursor(ctx))
        if paged is None:
            return Enforced(observation, "no JSON list longer than one page", changed=False)
        page, held = paged
        result = dump_json(page, observation)
    else:
        lines = observation.split("\n")
        if len(lines) <= size:
            return Enforced(observation, "fewer lines than one page", changed=False)
        held = len(lines) - size
        result = "\n".join(lines[:size]) + f"\n-- {held} more ({key}: {_cursor(ctx)}) --"
    return Enforced(
        result,
        f"first page of {size}; {held} items held back behind {key}",
        {"page_size": size, "held_back": held, "cursor": _cursor(ctx)},
    )


INFO = KindInfo(
    name="pagination",
    title="Pagination",
    description="A long JSON list (or text) is cut to its first page with a next cursor.",
    params=(
        Param("page_size", "int", 5, "Items per page."),
        Param("cursor_key", "str", "next_cursor", "Name of the cursor field."),
    ),
    instruction=_instruction,
    enforce=_enforce,
)
