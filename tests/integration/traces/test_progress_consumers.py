"""The import and simulation progress sockets, on the shared LiveConsumer.

Access goes through ``studio.core.access`` (these sockets once filtered memberships
by hand), the state comes first, and the ``progress`` event is relayed as sent or,
without HTML, rendered again from the database.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from studio.lib.channels import PROGRESS
from studio.lib.consumers import NOT_FOUND
from studio.traces.consumers import ImportProgressConsumer
from studio.traces.models import ImportJob

pytestmark = pytest.mark.django_db(transaction=True)


def _communicator(user, job_id: int) -> WebsocketCommunicator:
    path = f"/ws/traces/imports/{job_id}/"
    communicator = WebsocketCommunicator(ImportProgressConsumer.as_asgi(), path)
    communicator.scope["user"] = user
    communicator.scope["url_route"] = {"kwargs": {"pk": job_id}}
    return communicator


async def test_a_member_gets_the_state_then_each_progress_event(project, owner) -> None:
    job = await sync_to_async(ImportJob.objects.create)(
        project=project, filename="rows.jsonl", lines_total=4
    )
    communicator = _communicator(owner, job.pk)
    assert (await communicator.connect())[0]
    assert 'id="import-progress" data-status="pending"' in await communicator.receive_from(
        timeout=10
    )

    await get_channel_layer().group_send(
        job.group_name, {"type": PROGRESS, "html": "<p>as sent</p>"}
    )
    assert await communicator.receive_from(timeout=10) == "<p>as sent</p>"

    await sync_to_async(ImportJob.objects.filter(pk=job.pk).update)(lines_done=2)
    await get_channel_layer().group_send(job.group_name, {"type": PROGRESS})
    assert 'aria-valuenow="50"' in await communicator.receive_from(timeout=10)
    await communicator.disconnect()


async def test_a_stranger_is_refused_as_if_the_job_did_not_exist(project) -> None:
    job = await sync_to_async(ImportJob.objects.create)(project=project, filename="rows.jsonl")
    stranger = await sync_to_async(get_user_model().objects.create_user)("eve", "", "pw-12345678")

    communicator = _communicator(stranger, job.pk)
    assert await communicator.connect() == (False, NOT_FOUND)
    await communicator.disconnect()
