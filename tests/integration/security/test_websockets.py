"""Every WebSocket route refuses foreign origins, anonymous users and non-members.

Driven through the whole ASGI application (origin validator, session auth, router),
with a real session cookie, for every route in ``studio.routing``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from studio.asgi import application
from studio.core.models import Membership, Project
from studio.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)

GOOD_ORIGIN = b"http://testserver"
MISSING = "999999"


def ws_paths() -> list[str]:
    paths = []
    for pattern in websocket_urlpatterns:
        route = str(pattern.pattern)
        paths.append("/" + re.sub(r"<(?:\w+:)?\w+>", MISSING, route))
    return paths


def _member(username: str, slug: str, role: str = "owner") -> tuple[Any, Project, str]:
    user = get_user_model().objects.create_user(username, "", "pw-ws-123456")
    project = Project.objects.create(name=slug, slug=slug)
    Membership.objects.create(project=project, user=user, role=role)
    client = Client()
    client.force_login(user)
    return user, project, client.cookies["sessionid"].value


def _episode_in(project: Project, user: Any) -> int:
    from studio.episodes.models import Episode
    from studio.worlds.services import world_create

    world = world_create(
        project=project,
        spec={
            "domain": "terminal",
            "title": "Box",
            "premise": "A box.",
            "initial_observation": "$ ",
        },
        user=user,
    )
    assert world.head is not None
    return Episode.objects.create(
        project=project, world_revision=world.head, title="E", domain="terminal"
    ).pk


async def connect(path: str, *, origin: bytes | None, session: str | None) -> tuple[bool, Any]:
    headers = []
    if origin is not None:
        headers.append((b"origin", origin))
    if session is not None:
        headers.append((b"cookie", f"sessionid={session}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, code = await communicator.connect(timeout=10)
    await communicator.disconnect()
    return connected, code


def test_it_covers_every_websocket_route() -> None:
    paths = ws_paths()
    assert "/ws/status/" in paths and f"/ws/episodes/{MISSING}/" in paths
    assert len(paths) >= 3


@pytest.mark.parametrize("path", ws_paths())
async def test_it_refuses_sockets_without_a_session(path: str) -> None:
    connected, _ = await connect(path, origin=GOOD_ORIGIN, session=None)
    assert not connected


@pytest.mark.parametrize("path", ws_paths())
@pytest.mark.parametrize("origin", [b"http://evil.example", b"null", None])
async def test_it_refuses_sockets_from_a_foreign_origin(path: str, origin: bytes | None) -> None:
    _, _, session = await sync_to_async(_member)("ws-origin", "ws-origin")
    connected, _ = await connect(path, origin=origin, session=session)
    assert not connected


@pytest.mark.parametrize("path", [p for p in ws_paths() if MISSING in p])
async def test_it_refuses_objects_that_do_not_exist(path: str) -> None:
    _, _, session = await sync_to_async(_member)("ws-missing", "ws-missing")
    connected, _ = await connect(path, origin=GOOD_ORIGIN, session=session)
    assert not connected


async def test_it_accepts_a_signed_in_user_from_the_studio_origin() -> None:
    """The control: the same requests succeed when origin and session are right."""
    user, project, session = await sync_to_async(_member)("ws-ok", "ws-ok")
    episode = await sync_to_async(_episode_in)(project, user)
    assert (await connect("/ws/status/", origin=GOOD_ORIGIN, session=session))[0]
    assert (await connect(f"/ws/episodes/{episode}/", origin=GOOD_ORIGIN, session=session))[0]


async def test_it_refuses_an_episode_of_another_project() -> None:
    owner, project, _ = await sync_to_async(_member)("ws-owner", "ws-owner")
    _, _, stranger = await sync_to_async(_member)("ws-stranger", "ws-stranger")
    episode = await sync_to_async(_episode_in)(project, owner)
    connected, code = await connect(
        f"/ws/episodes/{episode}/", origin=GOOD_ORIGIN, session=stranger
    )
    assert not connected
    assert code == 4404
