from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from studio.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = (b"origin", b"http://testserver")


async def _user():
    from asgiref.sync import sync_to_async

    return await sync_to_async(get_user_model().objects.create_user)("alice", "", "pw-12345678")


async def test_it_round_trips_a_ping_through_an_in_process_task():
    from studio.core.consumers import StatusConsumer

    user = await _user()
    communicator = WebsocketCommunicator(StatusConsumer.as_asgi(), "/ws/status/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected

    await communicator.send_json_to({"ping": "1"})
    html = await communicator.receive_from(timeout=10)

    assert 'id="pipeline-result"' in html
    assert "Round trip through in-process task" in html
    await communicator.disconnect()


async def test_it_refuses_anonymous_sockets():
    communicator = WebsocketCommunicator(application, "/ws/status/", headers=[ORIGIN])
    connected, code = await communicator.connect()
    assert (connected, code) == (False, 4401)
    await communicator.disconnect()


async def test_it_refuses_a_foreign_origin():
    communicator = WebsocketCommunicator(
        application, "/ws/status/", headers=[(b"origin", b"http://evil.example")]
    )
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()
