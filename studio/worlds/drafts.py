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
from typing import Any, Literal

from simulator.domains import domain_names, get_domain
from simulator.errors import InvalidWorld
from simulator.world import World as WorldSpec

FieldKind = Literal["text", "textarea", "json", "code"]
NON_FIELD = "nonfield"


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    kind: FieldKind
    help: str = ""
    #: True for keys of ``World.extras``; False for top-level world keys.
    extra: bool = True


INITIAL_LABELS = {
    "mcp": ("Initial observation", "Optional: what the agent sees before its first call."),
    "search": ("Initial observation", "Optional: what the agent sees before its first search."),
    "terminal": ("Initial screen", "The terminal as the agent first sees it."),
    "swe": ("Initial screen", "The terminal in the repository, before the first command."),
    "web": ("Initial page", "HTML (or an AXTree / ARIA snapshot) of the first page."),
    "os": ("Initial screen", "The desktop's accessibility table or tree."),
    "android": ("Initial screen", "uiautomator XML (or an AndroidWorld element list)."),
}

_SHELL = (
    Field("hostname", "Host name", "text"),
    Field("user", "User", "text"),
    Field("cwd", "Working directory", "text"),
    Field("files", "Seed files", "json", 'JSON: {"path": "content", ...}'),
)

EXTRA_FIELDS: dict[str, tuple[Field, ...]] = {
    "mcp": (
        Field(
            "tools",
            "Tools",
            "json",
            'JSON list: [{"name", "description", "input_schema": <JSON Schema>}, ...]',
        ),
        Field("resources", "Resources", "json", "JSON list or object of resources."),
    ),
    "search": (
        Field(
            "corpus",
            "Corpus: entities and facts",
            "json",
            'JSON list: [{"entity": "...", "facts": ["...", ...]}, ...]',
        ),
    ),
    "terminal": _SHELL,
    "swe": (Field("repository", "Repository", "text", "Name or URL of the repository."), *_SHELL),
    "os": (Field("screen", "Screen", "json", 'JSON: {"width": 1920, "height": 1080}'),),
}

STARTERS: dict[str, str] = {
    "web": (
        "<!DOCTYPE html>\n<html>\n<head><title>New page</title></head>\n<body>\n"
        '  <h1>Welcome</h1>\n  <p>Describe the first page here.</p>\n  <button bid="1">Continue</button>\n'
        "</body>\n</html>\n"
    ),
    "os": (
        "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)\n"
        "frame\tDesktop\t\t\t\t(0, 0)\t(1920, 1080)\n"
        "push-button\tFiles\t\t\t\t(10, 40)\t(64, 64)\n"
    ),
    "android": (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n"
        '<hierarchy rotation="0">\n'
        '  <node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
        'package="com.example.home" content-desc="" clickable="false" bounds="[0,0][1080,2400]">\n'
        '    <node index="0" text="Home" resource-id="com.example.home:id/title" '
        'class="android.widget.TextView" package="com.example.home" content-desc="" '
        'clickable="false" bounds="[40,120][1040,220]" />\n'
        "  </node>\n</hierarchy>\n"
    ),
    "terminal": "user@workstation:~$ ",
    "swe": "dev@build:~/project$ ",
}


def domain_choices() -> list[tuple[str, str]]:
    return [(name, get_domain(name).title) for name in domain_names()]


def fields_for(domain: str) -> tuple[Field, ...]:
    label, help_text = INITIAL_LABELS.get(domain, ("Initial observation", ""))
    return (
        Field("title", "Title", "text", extra=False),
        Field("premise", "Premise", "textarea", "What this fictional world is.", extra=False),
        Field("initial_observation", label, "code", help_text, extra=False),
        *EXTRA_FIELDS.get(domain, ()),
    )


@dataclass
class Draft:
    domain: str
    values: dict[str, str]
    errors: dict[str, list[str]] = field(default_factory=dict)
    spec: dict[str, Any] | None = None

    @property
    def fields(self) -> list[tuple[Field, str, list[str]]]:
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
    return WorldSpec(
        domain=domain, title=title, initial_observation=STARTERS.get(domain, "")
    ).to_dict()


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
