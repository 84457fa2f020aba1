"""The job page's live panel: its bar, per-episode rows and throughput, pushed over the socket."""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from studio.rollouts import services
from studio.rollouts.models import RolloutJob, RowStatus
from studio.rollouts.routing import websocket_urlpatterns
from studio.rollouts.selectors import job_progress
from tests.integration.api.factories import make_project, make_scenario, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def _job_without_tasks(monkeypatch) -> RolloutJob:
    """A two-episode job whose tasks are never sent, so the test finishes its rows itself."""
    monkeypatch.setattr(services, "_dispatch_rows", lambda job, indexes: None)
    user = make_user("alice")
    project = make_project(user)
    return services.rollout_job_create(
        project=project, scenario=make_scenario(project), user=user, episodes=2, max_steps=3,
        policy={"kind": "scripted", "actions": ["make"]},
    )  # fmt: skip


def _finish(job: RolloutJob, index: int) -> None:
    services.row_finish(row=job.rows.get(index=index), status=RowStatus.DONE, outcome="truncated")
    services.job_maybe_finish(job=job)
    services.publish_progress(job)


async def test_the_socket_pushes_the_bar_and_each_episode_as_rows_finish(monkeypatch):
    job = await sync_to_async(_job_without_tasks)(monkeypatch)
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/rollouts/{job.pk}/"
    )
    communicator.scope["user"] = await sync_to_async(lambda: job.created_by)()
    connected, _ = await communicator.connect()
    assert connected

    caught_up = await communicator.receive_from(timeout=10)
    await sync_to_async(_finish)(job, 0)
    half = await communicator.receive_from(timeout=10)
    await sync_to_async(_finish)(job, 1)
    whole = await communicator.receive_from(timeout=10)
    await communicator.disconnect()

    assert 'data-percent="0"' in caught_up and 'aria-valuenow="0"' in caught_up
    assert 'id="rollout-row-0" data-status="pending"' in caught_up
    assert 'data-percent="50"' in half and 'id="progress-percent">50%' in half
    assert 'id="rollout-row-0" data-status="done"' in half
    assert 'id="rollout-row-1" data-status="pending"' in half
    assert 'data-status="done" data-percent="100"' in whole and 'aria-valuenow="2"' in whole
    assert 'id="rollout-row-1" data-status="done"' in whole


def test_throughput_counts_finished_episodes_per_minute_since_the_start(client, monkeypatch):
    job = _job_without_tasks(monkeypatch)
    _finish(job, 0)
    _finish(job, 1)
    job.refresh_from_db()
    assert job.finished_at is not None
    RolloutJob.objects.filter(pk=job.pk).update(created_at=job.finished_at - timedelta(minutes=1))
    job.refresh_from_db()
    client.force_login(job.created_by)

    fragment = client.get(f"/rollouts/{job.pk}/", HTTP_HX_REQUEST="true").content.decode()

    assert job_progress(job).episodes_per_min == pytest.approx(2.0)
    assert '<td id="throughput">2.0 episodes/min' in fragment
