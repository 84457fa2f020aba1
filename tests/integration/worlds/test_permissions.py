"""Every URL of the authoring pages, for every kind of visitor.

anonymous -> login redirect; outsider (member of another project) -> 404;
viewer -> 200 on reads, 403 on writes; editor and owner -> success; member
management is for owners only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from studio.worlds import services

ROLES = ["anonymous", "outsider", "viewer", "editor", "owner"]


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    url: Callable[[dict[str, Any]], str]
    kind: str  # read | write | owner | user (any signed-in user; not tied to a project)
    data: Callable[[dict[str, Any]], dict[str, Any]] = lambda ctx: {}


def _bundle(ctx: dict[str, Any]) -> dict[str, Any]:
    text = services.bundle_export(scenario=ctx["scenario"])
    return {"project": "alpha", "bundle": SimpleUploadedFile("b.json", text.encode())}


CASES = [
    # projects
    Case("project-list", "get", lambda c: "/projects/", "user"),
    Case("project-create-form", "get", lambda c: "/projects/new/", "user"),
    Case("project-create", "post", lambda c: "/projects/new/", "user", lambda c: {"name": "Gamma"}),
    Case("project-detail", "get", lambda c: "/projects/alpha/", "read"),
    Case(
        "member-add",
        "post",
        lambda c: "/projects/alpha/members/add",
        "owner",
        lambda c: {"username": "outsider", "role": "viewer"},
    ),
    Case(
        "member-role",
        "post",
        lambda c: f"/projects/alpha/members/{c['viewer_membership']}/role",
        "owner",
        lambda c: {"role": "editor"},
    ),
    Case(
        "member-remove",
        "post",
        lambda c: f"/projects/alpha/members/{c['viewer_membership']}/remove",
        "owner",
    ),
    # worlds
    Case("world-list", "get", lambda c: "/worlds/", "user"),
    Case("world-create-form", "get", lambda c: "/worlds/new/?project=alpha", "write"),
    Case(
        "world-create",
        "post",
        lambda c: "/worlds/new/",
        "write",
        lambda c: {"project": "alpha", "domain": "web", "title": "New"},
    ),
    Case("world-detail", "get", lambda c: f"/worlds/{c['world'].pk}/", "read"),
    Case(
        "world-save",
        "post",
        lambda c: f"/worlds/{c['world'].pk}/save",
        "write",
        lambda c: {"title": "Renamed", "premise": "p", "initial_observation": "<p>x</p>"},
    ),
    Case(
        "world-validate",
        "post",
        lambda c: f"/worlds/{c['world'].pk}/validate",
        "write",
        lambda c: {"field": "title", "title": "T"},
    ),
    Case(
        "world-preview",
        "post",
        lambda c: f"/worlds/{c['world'].pk}/preview",
        "write",
        lambda c: {"initial_observation": "<p>draft</p>"},
    ),
    Case("world-revisions", "get", lambda c: f"/worlds/{c['world'].pk}/revisions/", "read"),
    Case(
        "revision-preview", "get", lambda c: f"/worlds/{c['world'].pk}/revisions/1/preview", "read"
    ),
    Case("world-duplicate", "post", lambda c: f"/worlds/{c['world'].pk}/duplicate", "write"),
    Case(
        "world-archive",
        "post",
        lambda c: f"/worlds/{c['world'].pk}/archive",
        "write",
        lambda c: {"archived": "1"},
    ),
    # scenarios
    Case("scenario-list", "get", lambda c: "/worlds/scenarios/", "user"),
    Case(
        "scenario-create-form",
        "get",
        lambda c: f"/worlds/scenarios/new/?world={c['world'].pk}",
        "write",
    ),
    Case(
        "scenario-create",
        "post",
        lambda c: "/worlds/scenarios/new/",
        "write",
        lambda c: {"world": c["world"].pk, "title": "Another"},
    ),
    Case(
        "scenario-import-form", "get", lambda c: "/worlds/scenarios/import/?project=alpha", "write"
    ),
    Case("scenario-import", "post", lambda c: "/worlds/scenarios/import/", "write", _bundle),
    Case("scenario-detail", "get", lambda c: f"/worlds/scenarios/{c['scenario'].pk}/", "read"),
    Case(
        "scenario-save",
        "post",
        lambda c: f"/worlds/scenarios/{c['scenario'].pk}/save",
        "write",
        lambda c: {
            "section": "basics",
            "title": "T2",
            "task": "x",
            "max_steps": "5",
            "seed": "1",
            "world_revision": "1",
        },
    ),
    Case(
        "scenario-validate",
        "post",
        lambda c: f"/worlds/scenarios/{c['scenario'].pk}/validate",
        "write",
        lambda c: {"row": "0", "success-0-kind": "regex", "success-0-pattern": "ok"},
    ),
    Case(
        "scenario-prompt", "get", lambda c: f"/worlds/scenarios/{c['scenario'].pk}/prompt", "read"
    ),
    Case(
        "scenario-export", "get", lambda c: f"/worlds/scenarios/{c['scenario'].pk}/export", "read"
    ),
    Case(
        "scenario-duplicate",
        "post",
        lambda c: f"/worlds/scenarios/{c['scenario'].pk}/duplicate",
        "write",
    ),
    Case(
        "scenario-archive",
        "post",
        lambda c: f"/worlds/scenarios/{c['scenario'].pk}/archive",
        "write",
        lambda c: {"archived": "1"},
    ),
    Case(
        "perturbation-add",
        "post",
        lambda c: f"/worlds/scenarios/{c['scenario'].pk}/perturbations/add",
        "write",
        lambda c: {"kind": "latency"},
    ),
    Case(
        "perturbation-save",
        "post",
        lambda c: f"/worlds/scenarios/{c['scenario'].pk}/perturbations/0/save",
        "write",
        lambda c: {
            "mode": "enforced",
            "param-max_chars": "100",
            "param-marker": "[cut]",
            "trigger-first_step": "1",
        },
    ),
    Case(
        "perturbation-move",
        "post",
        lambda c: f"/worlds/scenarios/{c['scenario'].pk}/perturbations/0/move",
        "write",
        lambda c: {"direction": "down"},
    ),
    Case(
        "perturbation-remove",
        "post",
        lambda c: f"/worlds/scenarios/{c['scenario'].pk}/perturbations/0/remove",
        "write",
    ),
    # The Start episode button on scenario and world pages posts to the new-episode view.
    Case(
        "episode-start",
        "post",
        lambda c: "/episodes/new/",
        "write",
        lambda c: {"project": "alpha", "start": f"scenario:{c['scenario'].pk}"},
    ),
]


def expected(kind: str, role: str) -> set[int]:
    if role == "anonymous":
        return {302}
    if kind == "user":
        return {200, 302}
    if role == "outsider":
        return {404}
    if kind == "read" or role == "owner" or (kind == "write" and role == "editor"):
        return {200, 302}
    return {403}


def world_names(module) -> set[str]:
    return {str(getattr(p, "name", "")) for p in module.urlpatterns}


def test_every_url_of_the_authoring_urlconf_is_in_the_matrix():
    from studio.core import urls as core_urls
    from studio.worlds import urls as world_urls

    covered = {c.name.removesuffix("-form") for c in CASES}
    names = {str(getattr(p, "name", "")) for p in world_urls.urlpatterns} | {
        str(getattr(p, "name", "")) for p in core_urls.urlpatterns
    }
    names = {n for n in names if n and (n.startswith("project") or n in world_names(world_urls))}
    aliases = {
        "list": "world-list",
        "create": "world-create",
        "detail": "world-detail",
        "save": "world-save",
        "validate": "world-validate",
        "preview": "world-preview",
        "revisions": "world-revisions",
        "duplicate": "world-duplicate",
        "archive": "world-archive",
        "project-member-add": "member-add",
        "project-member-role": "member-role",
        "project-member-remove": "member-remove",
    }
    assert {aliases.get(n, n) for n in names} <= covered


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_it_enforces_project_roles(case: Case, role: str, people, scenario, client: Client):
    ctx = {
        "world": scenario.world,
        "scenario": scenario,
        "viewer_membership": people.membership("viewer").pk,
    }
    if role != "anonymous":
        client.force_login(people.users[role])
    response = getattr(client, case.method)(case.url(ctx), case.data(ctx))

    assert response.status_code in expected(case.kind, role), (
        case.name,
        role,
        response.status_code,
    )
    if role == "anonymous":
        assert response["Location"].startswith("/login/")
