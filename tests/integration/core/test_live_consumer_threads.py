"""Sockets run their database work on the event loop's database threads (db_call), not
in one thread shared by every socket of the process (Channels' database_sync_to_async)."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from studio.lib.consumers import LiveConsumer

# A socket's disconnect closes the old connections of Channels' shared sync thread, which
# an earlier test may have left one in: without database access that close is refused.
pytestmark = pytest.mark.django_db


class MeetingConsumer(LiveConsumer):
    """Its action returns only once two sockets' actions run at the same time."""

    id_kwarg = None
    meeting = threading.Barrier(2)

    def join(self, user: Any, object_id: int | None) -> str:
        return "meeting"

    def act(self, content: dict[str, Any]) -> str:
        self.meeting.wait(timeout=5)
        return "met"

    def problem(self, message: str) -> str:
        return "apart"


async def _connected() -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(MeetingConsumer.as_asgi(), "/ws/meeting/")
    communicator.scope["user"] = SimpleNamespace(is_authenticated=True)
    assert (await communicator.connect())[0]
    return communicator


@override_settings(DB_CALLS_IN_REQUEST_THREAD=False)
def test_two_sockets_act_at_the_same_time() -> None:
    MeetingConsumer.meeting = threading.Barrier(2)

    async def run() -> list[str]:
        sockets = [await _connected(), await _connected()]
        for socket in sockets:
            await socket.send_json_to({"intent": "meet"})
        answers = [await socket.receive_from(timeout=10) for socket in sockets]
        for socket in sockets:
            await socket.disconnect()
        return answers

    assert asyncio.run(run()) == ["met", "met"]
