"""Trajectory JSONL: one episode per line, with every step and its telemetry.

A record carries the world (so the file stands alone), the scenario it ran
(or null), the task and seed, each step's full :class:`StepResult` (action,
observation, reasoning, raw output, request, firings, verifiers, timings,
usage) and free metadata. ``trajectory_version`` lets readers refuse what they
do not understand.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from simulator.episode import StepResult, Turn
from simulator.errors import FormatError
from simulator.formats._jsonl import dumps, iter_records, write_lines
from simulator.scenario import Scenario
from simulator.world import World

TRAJECTORY_VERSION = 1


@dataclass(frozen=True)
class EpisodeRecord:
    """One episode as exported."""

    world: World
    steps: tuple[StepResult, ...]
    task: str = ""
    seed: int = 0
    scenario: Scenario | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def turns(self) -> tuple[Turn, ...]:
        return tuple(step.turn() for step in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trajectory_version": TRAJECTORY_VERSION,
            "world": self.world.to_dict(),
            "scenario": self.scenario.to_dict() if self.scenario else None,
            "task": self.task,
            "seed": self.seed,
            "steps": [step.to_dict() for step in self.steps],
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Any) -> EpisodeRecord:
        if not isinstance(data, Mapping):
            raise FormatError("an episode must be a JSON object")
        version = data.get("trajectory_version")
        if version != TRAJECTORY_VERSION:
            raise FormatError(f"unsupported version {version!r}", field="trajectory_version")
        for name, kind in (("world", Mapping), ("steps", list), ("metadata", Mapping)):
            if not isinstance(data.get(name), kind):
                raise FormatError("missing or of the wrong type", field=name)
        scenario = data.get("scenario")
        return cls(
            world=World.from_dict(data["world"]),
            steps=tuple(StepResult.from_dict(s) for s in data["steps"]),
            task=str(data.get("task", "")),
            seed=int(data.get("seed", 0)),
            scenario=Scenario.from_dict(scenario) if scenario is not None else None,
            metadata=dict(data["metadata"]),
        )


def dump_episode(record: EpisodeRecord) -> str:
    """One line (without newline)."""
    return dumps(record.to_dict())


def iter_trajectories(source: str | Path | Iterable[str]) -> Iterator[EpisodeRecord | FormatError]:
    """Episodes of a file or of lines, with a :class:`FormatError` per bad line."""
    return iter_records(source, EpisodeRecord.from_dict)


def write_trajectories(records: Iterable[EpisodeRecord], target: str | Path | IO[str]) -> None:
    write_lines((dump_episode(r) for r in records), target)
