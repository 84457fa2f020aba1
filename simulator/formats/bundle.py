"""Scenario bundles: a world and a scenario in one versioned JSON document.

A bundle is what a researcher shares: import it into another studio and the
same world, task, perturbations and success criteria come back. Documents are
written with two-space indentation and a final newline, UTF-8 kept as is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simulator.errors import FormatError, InvalidWorld
from simulator.scenario import Scenario, scenario_problems
from simulator.world import World

BUNDLE_VERSION = 1


@dataclass(frozen=True)
class Bundle:
    world: World
    scenario: Scenario

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle_version": BUNDLE_VERSION,
            "world": self.world.to_dict(),
            "scenario": self.scenario.to_dict(),
        }


def validate_bundle(data: Any) -> list[str]:
    """Every problem with a decoded bundle, each as ``where: reason`` (empty when valid)."""
    if not isinstance(data, Mapping):
        return ["bundle: must be a JSON object"]
    problems = []
    version = data.get("bundle_version")
    if version != BUNDLE_VERSION:
        problems.append(f"bundle_version: expected {BUNDLE_VERSION}, got {version!r}")
    unknown = set(data) - {"bundle_version", "world", "scenario"}
    if unknown:
        problems.append(f"bundle: unknown keys {sorted(unknown)}")
    world = data.get("world")
    if not isinstance(world, Mapping):
        problems.append("world: must be an object")
    else:
        try:
            World.from_dict(world)
        except InvalidWorld as exc:
            problems += [f"world.{p}" for p in exc.problems]
    problems += scenario_problems(data.get("scenario"))
    return problems


def load_bundle(text: str) -> Bundle:
    """Parse and validate a bundle; :class:`FormatError` lists every problem."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FormatError(f"invalid JSON ({exc})") from exc
    problems = validate_bundle(data)
    if problems:
        raise FormatError("; ".join(problems))
    return Bundle(World.from_dict(data["world"]), Scenario.from_dict(data["scenario"]))


def dump_bundle(bundle: Bundle) -> str:
    return json.dumps(bundle.to_dict(), ensure_ascii=False, indent=2) + "\n"
