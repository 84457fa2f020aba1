"""The world editor's fields per domain, and turning posted form text into a world spec.

A draft is what the editor shows: the raw text of every field (so a half-typed
JSON document survives a round trip) plus the problems found in it, each placed
at the field it belongs to. Validation is the simulator's own
(``World.from_dict`` and the domain's ``validate_extras``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simulator.domains import Domain, domain_names, get_domain
from simulator.domains.forms import EditorField
from simulator.errors import InvalidWorld
from simulator.world import World as WorldSpec

NON_FIELD = "nonfield"


def domain_choices() -> list[tuple[str, str]]:
    return [(name, get_domain(name).title) for name in domain_names()]


def fields_for(domain: str) -> tuple[EditorField, ...]:
    """The editor's fields: every world's, then what the domain adds for its extras."""
    try:
        spec = get_domain(domain)
    except KeyError:
        # A world of a domain this process does not know still opens in the editor.
        return _common_fields(Domain.initial_label, Domain.initial_help)
    return (*_common_fields(spec.initial_label, spec.initial_help), *spec.editor_fields)


def _common_fields(initial_label: str, initial_help: str) -> tuple[EditorField, ...]:
    return (
        EditorField("title", "Title", "text", extra=False),
        EditorField("premise", "Premise", "textarea", "What this fictional world is.", extra=False),
        EditorField("initial_observation", initial_label, "code", initial_help, extra=False),
    )


@dataclass
class Draft:
    domain: str
    values: dict[str, str]
    errors: dict[str, list[str]] = field(default_factory=dict)
    spec: dict[str, Any] | None = None

    @property
    def fields(self) -> list[tuple[EditorField, str, list[str]]]:
        return [
            (f, self.values.get(f.name, ""), self.errors.get(f.name, []))
            for f in fields_for(self.domain)
        ]

    @property
    def non_field_errors(self) -> list[str]:
        return self.errors.get(NON_FIELD, [])

    @property
    def ok(self) -> bool:
        return self.spec is not None and not self.errors


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def draft_from_spec(spec: Mapping[str, Any]) -> Draft:
    domain = str(spec.get("domain", ""))
    extras = spec.get("extras", {}) or {}
    values = {}
    for f in fields_for(domain):
        source = extras if f.extra else spec
        values[f.name] = _show(source[f.name]) if f.name in source else ""
    return Draft(domain, values, spec=dict(spec))


def starter_spec(domain: str, title: str) -> dict[str, Any]:
    """A new world of ``domain``, opening on the domain's starter observation."""
    starter = get_domain(domain).starter_observation
    return WorldSpec(domain=domain, title=title, initial_observation=starter).to_dict()


def draft_from_post(
    domain: str, data: Mapping[str, str], *, base: Mapping[str, Any] | None = None
) -> Draft:
    """Parse the editor's fields; ``base`` supplies what the form does not edit (sampling)."""
    values = {f.name: str(data.get(f.name, "")).replace("\r\n", "\n") for f in fields_for(domain)}
    draft = Draft(domain, values)
    spec: dict[str, Any] = {"domain": domain, "extras": {}}
    if base and "sampling" in base:
        spec["sampling"] = base["sampling"]
    for f in fields_for(domain):
        text = values[f.name]
        target = spec["extras"] if f.extra else spec
        if f.kind == "json":
            if not text.strip():
                continue
            try:
                target[f.name] = json.loads(text)
            except ValueError as exc:
                draft.errors.setdefault(f.name, []).append(f"not valid JSON ({exc})")
        elif f.extra:
            if text.strip():
                target[f.name] = text.strip()
        else:
            target[f.name] = text.strip() if f.kind == "text" else text
    if draft.errors:
        return draft
    try:
        world = WorldSpec.from_dict(spec)
    except InvalidWorld as exc:
        names = {f.name for f in fields_for(domain)}
        for problem in exc.problems:
            match = re.match(r"[A-Za-z_]+", problem)
            key = match.group(0) if match and match.group(0) in names else NON_FIELD
            draft.errors.setdefault(key, []).append(problem)
        return draft
    draft.spec = world.to_dict()
    return draft
