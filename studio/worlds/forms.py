"""Scenario editor forms: posted text to spec pieces, and spec pieces back to form values.

The simulator validates (``perturbation_problems``, ``scenario_problems``); these
functions only convert text to typed values and place each problem at its field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simulator.perturbations import PERTURBATION_KINDS, KindInfo, Param, perturbation_problems
from simulator.scenario import criterion_problems, policy_problems
from simulator.types import Sampling

NON_FIELD = "nonfield"
TRIGGER_FIELDS = ("first_step", "last_step", "action_pattern", "tool", "probability", "seed")
SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "max_tokens", "seed")
OPTIONAL_SAMPLING_FIELDS = ("top_p", "top_k", "seed")
CRITERION_FIELDS = ("kind", "pattern", "path", "value", "description", "reward", "terminate")


@dataclass
class Parsed:
    """A piece of a spec parsed from a form, with problems keyed by form field name."""

    data: dict[str, Any]
    errors: dict[str, list[str]] = field(default_factory=dict)

    def add(self, key: str, message: str) -> None:
        self.errors.setdefault(key, []).append(message)

    @property
    def ok(self) -> bool:
        return not self.errors


def _text(data: Mapping[str, str], key: str) -> str:
    return str(data.get(key, "")).replace("\r\n", "\n")


def number(parsed: Parsed, key: str, text: str, kind: type[int] | type[float]) -> Any:
    try:
        return kind(text.strip())
    except ValueError:
        parsed.add(key, f"must be {'an integer' if kind is int else 'a number'}")
        return None


# --- perturbations --------------------------------------------------------------------


def param_text(param: Param, value: Any) -> str:
    if param.type == "list[str]":
        return "\n".join(value)
    if param.type == "dict[str,str]":
        return "\n".join(f"{k}={v}" for k, v in value.items())
    if param.type == "bool":
        return "on" if value else ""
    return str(value)


def _param_value(parsed: Parsed, param: Param, text: str) -> Any:
    key = f"param-{param.name}"
    if param.type == "str":
        return text
    if param.type == "int":
        return number(parsed, key, text, int)
    if param.type == "float":
        return number(parsed, key, text, float)
    if param.type == "bool":
        return bool(text)
    if param.type == "list[str]":
        return [line.strip() for line in text.splitlines() if line.strip()]
    result = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep:
            parsed.add(key, f"line {line.strip()!r}: write key=value")
            continue
        result[name.strip()] = value.strip()
    return result


def perturbation_from_post(kind: str, data: Mapping[str, str]) -> Parsed:
    info = PERTURBATION_KINDS[kind]
    parsed = Parsed({"kind": kind, "mode": _text(data, "mode") or info.modes[0]})
    parsed.data["label"] = _text(data, "label").strip()
    parsed.data["params"] = {
        p.name: _param_value(parsed, p, _text(data, f"param-{p.name}")) for p in info.params
    }
    trigger: dict[str, Any] = {}
    for name in TRIGGER_FIELDS:
        text = _text(data, f"trigger-{name}").strip()
        key = f"trigger-{name}"
        if name in ("action_pattern", "tool"):
            trigger[name] = text or None
        elif name == "last_step":
            trigger[name] = number(parsed, key, text, int) if text else None
        elif name == "probability":
            trigger[name] = number(parsed, key, text or "1", float)
        else:
            trigger[name] = number(parsed, key, text or ("1" if name == "first_step" else "0"), int)
    parsed.data["trigger"] = trigger
    if parsed.ok:
        for problem in perturbation_problems(parsed.data):
            parsed.add(_perturbation_key(problem), problem)
    return parsed


def _perturbation_key(problem: str) -> str:
    match = re.match(r"(params|trigger)\.(\w+)", problem)
    if match:
        return f"{'param' if match.group(1) == 'params' else 'trigger'}-{match.group(2)}"
    if problem.startswith("mode"):
        return "mode"
    return NON_FIELD


@dataclass(frozen=True)
class PerturbationRow:
    """One perturbation as the editor shows it."""

    index: int
    kind: KindInfo
    data: Mapping[str, Any]
    params: list[tuple[Param, str]]
    trigger: dict[str, str]
    errors: Mapping[str, list[str]]
    saved: bool = False


def perturbation_row(
    index: int,
    data: Mapping[str, Any],
    *,
    errors: Mapping[str, list[str]] | None = None,
    posted: Mapping[str, str] | None = None,
    saved: bool = False,
) -> PerturbationRow:
    """The row for a stored perturbation, or for what was posted when it had problems."""
    info = PERTURBATION_KINDS[data["kind"]]
    params = data.get("params", {})
    trigger = data.get("trigger", {})
    if posted is not None:
        shown_params = [(p, _text(posted, f"param-{p.name}")) for p in info.params]
        shown_trigger = {n: _text(posted, f"trigger-{n}") for n in TRIGGER_FIELDS}
        data = {**data, "mode": _text(posted, "mode"), "label": _text(posted, "label")}
    else:
        shown_params = [(p, param_text(p, params.get(p.name, p.default))) for p in info.params]
        shown_trigger = {
            n: "" if trigger.get(n) is None else str(trigger.get(n)) for n in TRIGGER_FIELDS
        }
    return PerturbationRow(index, info, data, shown_params, shown_trigger, errors or {}, saved)


# --- success criteria -----------------------------------------------------------------


def criterion_rows(items: list[Mapping[str, Any]]) -> list[dict[str, str]]:
    rows = []
    for item in items:
        value = item.get("value")
        rows.append(
            {
                "kind": str(item.get("kind", "regex")),
                "pattern": str(item.get("pattern", "")),
                "path": str(item.get("path", "")),
                "value": "" if value is None else json.dumps(value, ensure_ascii=False),
                "description": str(item.get("description", "")),
                "reward": str(item.get("reward", 1.0)),
                "terminate": "on" if item.get("terminate", True) else "",
            }
        )
    return rows


def criterion_from_row(row: Mapping[str, str]) -> Parsed:
    parsed = Parsed({})
    kind = row.get("kind", "regex")
    value_text = row.get("value", "").strip()
    try:
        value = json.loads(value_text) if value_text else None
    except ValueError:
        value = value_text  # plain text compares as a string
    reward = number(parsed, "reward", row.get("reward", "1") or "1", float)
    parsed.data = {
        "kind": kind,
        "pattern": row.get("pattern", ""),
        "path": row.get("path", "").strip(),
        "value": value,
        "description": row.get("description", ""),
        "reward": reward,
        "terminate": bool(row.get("terminate")),
    }
    if parsed.ok:
        for problem in criterion_problems(parsed.data, "c"):
            match = re.match(r"c\.(\w+)", problem)
            parsed.add(match.group(1) if match else NON_FIELD, problem.removeprefix("c."))
    return parsed


def criteria_from_post(data: Mapping[str, str]) -> tuple[list[dict[str, str]], list[Parsed]]:
    """Rows as posted (blank rows dropped unless kind is judge) and each row parsed."""
    try:
        count = int(data.get("success-count", "0"))
    except ValueError:
        count = 0
    rows = []
    for i in range(min(count, 50)):
        if data.get(f"success-{i}-delete"):
            continue
        row = {n: _text(data, f"success-{i}-{n}") for n in CRITERION_FIELDS}
        if (
            not any(row[n].strip() for n in ("pattern", "path", "description"))
            and row["kind"] != "judge"
        ):
            continue
        rows.append(row)
    return rows, [criterion_from_row(row) for row in rows]


# --- policy and sampling --------------------------------------------------------------


def policy_from_post(data: Mapping[str, str]) -> Parsed:
    kind = _text(data, "policy-kind") or "human"
    actions = [line for line in _text(data, "policy-actions").splitlines() if line.strip()]
    parsed = Parsed({"kind": kind, "actions": actions, "endpoint": _text(data, "policy-endpoint")})
    for problem in policy_problems(parsed.data):
        match = re.match(r"policy\.(\w+)", problem)
        parsed.add(f"policy-{match.group(1)}" if match else NON_FIELD, problem)
    return parsed


def sampling_from_post(data: Mapping[str, str]) -> Parsed:
    if not data.get("sampling-override"):
        return Parsed({"sampling": None})
    parsed = Parsed({})
    values: dict[str, Any] = {}
    for name in SAMPLING_FIELDS:
        text = _text(data, f"sampling-{name}").strip()
        kind: type[int] | type[float] = int if name in ("top_k", "max_tokens", "seed") else float
        if name in OPTIONAL_SAMPLING_FIELDS and not text:
            values[name] = None  # not sent: the server's (the model's) default applies
            continue
        values[name] = number(parsed, f"sampling-{name}", text, kind)
    if parsed.ok:
        if not 0 <= values["temperature"] <= 2:
            parsed.add("sampling-temperature", "must be between 0 and 2")
        if values["top_p"] is not None and not 0 < values["top_p"] <= 1:
            parsed.add("sampling-top_p", "must be in (0, 1]")
        if values["max_tokens"] < 1:
            parsed.add("sampling-max_tokens", "must be at least 1")
    parsed.data["sampling"] = values
    return parsed


def sampling_values(sampling: Mapping[str, Any] | None) -> dict[str, str]:
    base = Sampling().to_dict() if sampling is None else sampling
    return {k: "" if base.get(k) is None else str(base.get(k)) for k in SAMPLING_FIELDS}
