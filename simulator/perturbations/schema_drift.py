"""Schema drift: a JSON API renamed or dropped fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simulator.perturbations.registry import Enforced, KindInfo, Param
from simulator.perturbations.shapes import NotJson, dump_json, load_json
from simulator.perturbations.spec import Perturbation, StepContext


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    parts = [f"'{old}' is now called '{new}'" for old, new in dict(p.param("rename")).items()]
    parts += [f"'{key}' is no longer returned" for key in p.param("drop")]
    changes = "; ".join(parts) or "field names changed in a newer API version"
    return f"The response schema has changed: {changes}."


def _drift(value: Any, rename: Mapping[str, str], drop: set[str]) -> tuple[Any, int]:
    if isinstance(value, list):
        results = [_drift(v, rename, drop) for v in value]
        return [r for r, _ in results], sum(n for _, n in results)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        changes = 0
        for key, item in value.items():
            if key in drop:
                changes += 1
                continue
            inner, n = _drift(item, rename, drop)
            changes += n + (key in rename)
            out[rename.get(key, key)] = inner
        return out, changes
    return value, 0


def _enforce(p: Perturbation, observation: str, ctx: StepContext) -> Enforced:
    data = load_json(observation)
    if isinstance(data, NotJson):
        return Enforced(observation, "not JSON; unchanged", changed=False)
    drifted, changes = _drift(data, dict(p.param("rename")), set(p.param("drop")))
    result = dump_json(drifted, observation) if changes else observation
    return Enforced(
        result,
        f"{changes} keys renamed or dropped",
        {"changes": changes, "chars_before": len(observation), "chars_after": len(result)},
        changed=changes > 0,
    )


INFO = KindInfo(
    name="schema_drift",
    title="Schema drift",
    description="JSON keys are renamed or dropped, as after an unannounced API change.",
    params=(
        Param("rename", "dict[str,str]", {}, "Old key → new key, at any depth."),
        Param("drop", "list[str]", [], "Keys removed at any depth."),
    ),
    instruction=_instruction,
    enforce=_enforce,
)
