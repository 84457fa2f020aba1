"""A fictional world: what the world model is asked to simulate.

A world is plain data. Its identity is the hash of its canonical JSON, so the
studio can pin an episode to the exact revision it ran against and two equal
worlds always hash alike whatever order their keys were written in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simulator.errors import InvalidWorld
from simulator.types import Sampling

WORLD_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class World:
    """A world spec.

    ``extras`` holds what only one domain needs: mcp ``tools`` (JSON schemas) and
    ``resources``; search ``corpus`` (entities and facts); terminal ``hostname``,
    ``user``, ``cwd`` and ``files``; web/os/android nothing beyond the initial
    screen, which is ``initial_observation`` for every domain.
    """

    domain: str
    title: str
    premise: str = ""
    initial_observation: str = ""
    extras: Mapping[str, Any] = field(default_factory=dict)
    sampling: Sampling = field(default_factory=Sampling)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": WORLD_SCHEMA_VERSION,
            "domain": self.domain,
            "title": self.title,
            "premise": self.premise,
            "initial_observation": self.initial_observation,
            "extras": dict(self.extras),
            "sampling": self.sampling.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> World:
        """Build and validate a world; raises :class:`InvalidWorld` listing every problem."""
        problems: list[str] = []
        version = data.get("schema_version", WORLD_SCHEMA_VERSION)
        if version != WORLD_SCHEMA_VERSION:
            problems.append(f"schema_version: unsupported version {version!r}")
        for key in ("domain", "title"):
            if not isinstance(data.get(key), str) or not data.get(key):
                problems.append(f"{key}: required text")
        for key in ("premise", "initial_observation"):
            if not isinstance(data.get(key, ""), str):
                problems.append(f"{key}: must be text")
        extras = data.get("extras", {})
        if not isinstance(extras, Mapping):
            problems.append("extras: must be an object")
            extras = {}
        sampling = data.get("sampling", {})
        if not isinstance(sampling, Mapping):
            problems.append("sampling: must be an object")
            sampling = {}
        if problems:
            raise InvalidWorld(problems)
        world = cls(
            domain=data["domain"],
            title=data["title"],
            premise=data.get("premise", ""),
            initial_observation=data.get("initial_observation", ""),
            extras=dict(extras),
            sampling=Sampling.from_dict(dict(sampling)),
        )
        world.validate()
        return world

    def validate(self) -> None:
        """Check the domain exists and its extras fit it; raises :class:`InvalidWorld`."""
        from simulator.domains import get_domain

        problems: list[str] = []
        if not self.title.strip():
            problems.append("title: required text")
        try:
            domain = get_domain(self.domain)
        except KeyError:
            problems.append(f"domain: unknown domain {self.domain!r}")
        else:
            problems.extend(domain.validate_extras(self.extras))
        if problems:
            raise InvalidWorld(problems)

    def canonical_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def content_hash(self) -> str:
        """The world's revision id: sha256 of its canonical JSON."""
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()
