from __future__ import annotations

from collections.abc import Iterator

import pytest

from simulator.serve import RunningServer, start_server_in_thread
from studio.api.ratelimit import memory_buckets
from studio.api.services import token_create
from tests.integration.api.factories import make_project, make_scenario, make_user


@pytest.fixture(scope="session")
def model_server() -> Iterator[RunningServer]:
    """The protocol test server: answers each action with a deterministic echo."""
    with start_server_in_thread() as server:
        yield server


@pytest.fixture
def world_model(settings, model_server):
    settings.MODEL_URL = model_server.base_url
    settings.MODEL_NAME = "world-studio-test"
    memory_buckets.clear()
    return model_server


@pytest.fixture
def alice(db):
    return make_user("alice")


@pytest.fixture
def project(alice):
    return make_project(alice)


@pytest.fixture
def scenario(project):
    return make_scenario(project)


@pytest.fixture
def token(alice) -> str:
    _, clear = token_create(user=alice, name="trainer")
    return clear


@pytest.fixture
def api(client, token):
    """Django's test client with the token's Authorization header."""
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client
