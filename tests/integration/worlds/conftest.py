from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from studio.core.models import Membership, Project, Role
from studio.worlds import drafts, services
from studio.worlds.models import Scenario, World

WEB_PAGE = "<!DOCTYPE html><html><body><h1>Marrowby Books</h1><button bid='1'>Browse</button></body></html>"


@dataclass
class People:
    project: Project
    other: Project
    users: dict[str, Any]

    def membership(self, role: str) -> Membership:
        return Membership.objects.get(project=self.project, user=self.users[role])


@pytest.fixture
def people(db) -> People:
    model = get_user_model()
    users = {
        name: model.objects.create_user(name) for name in ("owner", "editor", "viewer", "outsider")
    }
    project = Project.objects.create(name="Alpha", slug="alpha")
    other = Project.objects.create(name="Beta", slug="beta")
    for role in ("owner", "editor", "viewer"):
        Membership.objects.create(project=project, user=users[role], role=Role(role))
    Membership.objects.create(project=other, user=users["outsider"], role=Role.OWNER)
    return People(project, other, users)


@pytest.fixture
def world(people: People) -> World:
    spec = drafts.starter_spec("web", "Marrowby Books")
    spec["initial_observation"] = WEB_PAGE
    return services.world_create(project=people.project, spec=spec, user=people.users["owner"])


@pytest.fixture
def scenario(world: World) -> Scenario:
    scenario = services.scenario_create(world=world, title="Find a book")
    services.scenario_perturbation_add(scenario=scenario, kind="truncation")
    scenario.refresh_from_db()
    return scenario
