from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from studio.core.models import Membership, Project


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user("alice", "", "correct-horse-9")


@pytest.fixture
def project(owner):
    project = Project.objects.create(name="Review", slug="review")
    Membership.objects.create(project=project, user=owner, role="owner")
    return project


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client
