"""What a user is told when something fails: a StudioError's message, never a bug's.

The bug is simulated by a service that raises a ValueError it was never meant to:
before studio/errors.py, views and the consumer caught ValueError and showed its
text to the user as if it were their mistake.
"""

from __future__ import annotations

import logging

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from studio.episodes import services
from studio.episodes.consumers import EpisodeConsumer
from studio.episodes.models import Step
from studio.lib.consumers import GENERIC_PROBLEM
from tests.integration.episodes import helpers

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "internal detail: connection string postgres://studio@db"


def _bug(**_: object) -> None:
    raise ValueError(SECRET)


def test_a_view_shows_a_studio_errors_message(client: Client) -> None:
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)  # a human agent: it cannot be run
    client.force_login(user)

    response = client.post(f"/episodes/{episode.pk}/agent/run", {"steps": "2"})

    assert response.status_code == 200
    assert "a human agent is driven from the composer" in response.content.decode()


def test_a_view_never_shows_a_bugs_value_error(monkeypatch, caplog) -> None:
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, agent={"kind": "scripted", "actions": ["ls"]})
    monkeypatch.setattr(services, "agent_run", _bug)
    client = Client(raise_request_exception=False)
    client.force_login(user)

    with caplog.at_level(logging.ERROR, logger="django.request"):
        response = client.post(f"/episodes/{episode.pk}/agent/run", {"steps": "2"})

    assert response.status_code == 500
    assert SECRET not in response.content.decode()
    assert any(r.exc_info and r.exc_info[1].args == (SECRET,) for r in caplog.records)


def _communicator(user, episode_id: int) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(EpisodeConsumer.as_asgi(), f"/ws/episodes/{episode_id}/")
    communicator.scope["user"] = user
    communicator.scope["url_route"] = {"kwargs": {"episode_id": episode_id}}
    return communicator


async def test_the_consumer_shows_a_studio_errors_message() -> None:
    project, user = await sync_to_async(helpers.project_with)()
    episode = await sync_to_async(helpers.episode)(project, user)
    communicator = _communicator(user, episode.pk)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=10)

    await communicator.send_json_to({"intent": "retry"})
    reply = await communicator.receive_from(timeout=10)

    assert 'id="composer-validation"' in reply and "There is no step yet." in reply
    await communicator.disconnect()


async def test_the_consumer_logs_a_bug_and_shows_a_generic_message(monkeypatch, caplog) -> None:
    project, user = await sync_to_async(helpers.project_with)()
    episode = await sync_to_async(helpers.episode)(project, user)
    monkeypatch.setattr(services, "step_submit", _bug)
    communicator = _communicator(user, episode.pk)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=10)

    with caplog.at_level(logging.ERROR, logger="studio.lib.consumers"):
        await communicator.send_json_to({"action": "ls -la"})
        reply = await communicator.receive_from(timeout=10)

    assert GENERIC_PROBLEM in reply and SECRET not in reply
    assert any(r.exc_info and r.exc_info[1].args == (SECRET,) for r in caplog.records)
    assert await sync_to_async(Step.objects.count)() == 0
    await communicator.send_json_to({"intent": "retry"})  # the socket still answers
    assert "There is no step yet." in await communicator.receive_from(timeout=10)
    await communicator.disconnect()
