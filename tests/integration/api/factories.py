"""Rows the API and rollout tests need: a user, a project, a terminal world and a scenario."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.contrib.auth.models import User

from studio.core.models import Membership, Project
from studio.worlds.models import Scenario, World, WorldRevision

WORLD_SPEC = {
    "schema_version": 1,
    "domain": "terminal",
    "title": "Build box",
    "premise": "A Debian build machine.",
    "initial_observation": "user@box:~$ ",
    "extras": {"hostname": "box", "user": "user", "cwd": "/home/user"},
}


def make_user(username: str = "alice") -> User:
    return User.objects.create_user(username, "", "correct-horse-9")


def make_project(owner: User, slug: str = "lab", role: str = "owner") -> Project:
    project = Project.objects.create(name=slug.title(), slug=slug)
    Membership.objects.create(project=project, user=owner, role=role)
    return project


def make_scenario(project: Project, **spec: Any) -> Scenario:
    world = World.objects.create(project=project, title="Build box", domain="terminal")
    revision = WorldRevision.objects.create(
        world=world,
        number=1,
        spec=WORLD_SPEC,
        content_hash=hashlib.sha256(json.dumps(WORLD_SPEC, sort_keys=True).encode()).hexdigest(),
    )
    World.objects.filter(pk=world.pk).update(head=revision)
    full = {
        "title": "Finish the build",
        "task": "Run the build until it prints BUILD OK.",
        "success": [{"kind": "regex", "pattern": "BUILD OK"}],
        "max_steps": 5,
        **spec,
    }
    return Scenario.objects.create(
        project=project, title=full["title"], world=world, world_revision=revision, spec=full
    )
