"""Hidden answer: results about a subject are withheld."""

from __future__ import annotations

import json
import re
from typing import Any

from simulator.perturbations.registry import Enforced, KindInfo, Param
from simulator.perturbations.shapes import NotJson, dump_json, load_json
from simulator.perturbations.spec import Perturbation, StepContext


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    subject = p.param("subject") or p.param("pattern")
    return (
        f"The observation must not reveal anything about {subject}. Results that would "
        "mention it are absent, as if the information did not exist here."
    )


def _drop(value: Any, pattern: re.Pattern[str]) -> tuple[Any, int]:
    """Remove list items (at any depth) whose JSON text matches ``pattern``."""
    if isinstance(value, list):
        kept: list[Any] = []
        dropped = 0
        for item in value:
            if pattern.search(json.dumps(item, ensure_ascii=False)):
                dropped += 1
                continue
            inner, n = _drop(item, pattern)
            kept.append(inner)
            dropped += n
        return kept, dropped
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        dropped = 0
        for key, item in value.items():
            out[key], n = _drop(item, pattern)
            dropped += n
        return out, dropped
    return value, 0


def _enforce(p: Perturbation, observation: str, ctx: StepContext) -> Enforced:
    pattern = re.compile(str(p.param("pattern")), re.IGNORECASE)
    data = load_json(observation)
    if not isinstance(data, NotJson) and isinstance(data, list | dict):
        kept, dropped = _drop(data, pattern)
        result = dump_json(kept, observation) if dropped else observation
        unit = "JSON items"
    else:
        lines = observation.split("\n")
        remaining = [line for line in lines if not pattern.search(line)]
        dropped = len(lines) - len(remaining)
        result = "\n".join(remaining)
        unit = "lines"
    return Enforced(
        result,
        f"dropped {dropped} {unit} matching /{pattern.pattern}/",
        {"dropped": dropped, "chars_before": len(observation), "chars_after": len(result)},
        changed=dropped > 0,
    )


INFO = KindInfo(
    name="hidden_answer",
    title="Hidden answer",
    description="Results that match a pattern (the answer the agent looks for) are removed.",
    params=(
        Param("pattern", "str", "answer", "Regex (case-insensitive) of results to drop."),
        Param("subject", "str", "", "Plain-words subject for the prompted instruction."),
    ),
    instruction=_instruction,
    enforce=_enforce,
)
