from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from studio.core.models import Membership, Project, Role
from studio.episodes.services import episode_create
from studio.worlds.services import world_create

pytestmark = pytest.mark.django_db


def test_it_shows_project_counts_and_recent_episodes(client: Client):
    user = get_user_model().objects.create_user("alice", "", "pw-12345678")
    project = Project.objects.create(name="Atlas", slug="atlas")
    Membership.objects.create(project=project, user=user, role=Role.OWNER)
    world = world_create(
        project=project, spec={"domain": "terminal", "title": "Quarry host"}, user=user
    )
    assert world.head is not None
    episode_create(project=project, user=user, world_revision=world.head, title="First try")
    Project.objects.create(name="Hidden", slug="hidden")
    client.force_login(user)

    page = client.get("/").content.decode()

    assert "Atlas" in page and "Hidden" not in page
    assert "1 world" in page and "1 episode" in page
    assert "First try" in page
