"""The episode WebSocket in embedded mode: in-process tasks, the in-process channel layer."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from studio.asgi import application
from studio.episodes.consumers import EpisodeConsumer
from studio.episodes.models import Step
from tests.integration.episodes import helpers

pytestmark = pytest.mark.django_db(transaction=True)


def _communicator(user, episode_id: int) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(EpisodeConsumer.as_asgi(), f"/ws/episodes/{episode_id}/")
    communicator.scope["user"] = user
    communicator.scope["url_route"] = {"kwargs": {"episode_id": episode_id}}
    return communicator


async def _until(
    communicator: WebsocketCommunicator, pattern: str, timeout: float = 20
) -> list[str]:
    """Every message up to and including the first one matching ``pattern``."""
    seen = []
    while True:
        message = await communicator.receive_from(timeout=timeout)
        seen.append(message)
        if re.search(pattern, message):
            return seen


async def test_it_streams_a_step_and_ends_with_the_saved_fragment(model_server):
    project, user = await sync_to_async(helpers.project_with)()
    model = await sync_to_async(helpers.endpoint)(project, model_server.base_url)
    episode = await sync_to_async(helpers.episode)(project, user, model=model)
    communicator = _communicator(user, episode.pk)
    assert (await communicator.connect())[0]
    state = await communicator.receive_from(timeout=10)
    assert 'id="timeline"' in state and 'id="episode-status"' in state

    await communicator.send_json_to({"intent": "step", "action": "ls -la /srv/app"})
    messages = await _until(communicator, r'id="step-1"[^>]*data-status="done"')

    deltas = [int(n) for m in messages for n in re.findall(r'data-seq="(\d+)"', m)]
    assert len(set(deltas)) >= 2 and deltas == sorted(deltas)
    first_delta = next(i for i, m in enumerate(messages) if "data-seq" in m)
    assert first_delta < len(messages) - 1
    assert 'hx-swap-oob="beforeend:#step-1-observation"' in "".join(messages)
    final = messages[-1]
    assert "ls -la /srv/app" in final
    assert f'src="/episodes/{episode.pk}/steps/1/render"' in final
    step = await sync_to_async(Step.objects.get)(episode=episode, index=1)
    assert step.status == "done" and "(simulated) ok" in step.observation
    assert step.telemetry["first_token_s"] is not None and step.telemetry["completion_tokens"] > 0
    await communicator.disconnect()


async def test_a_streamed_step_makes_no_trip_to_channels_shared_sync_thread(
    model_server, monkeypatch
):
    # Channels closes old connections in its one shared sync thread before each message;
    # the consumers' database work runs in db_call, so that trip per delta is skipped.
    import channels.consumer

    trips = []

    async def counted() -> None:
        trips.append(1)

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counted)
    project, user = await sync_to_async(helpers.project_with)()
    model = await sync_to_async(helpers.endpoint)(project, model_server.base_url)
    episode = await sync_to_async(helpers.episode)(project, user, model=model)
    communicator = _communicator(user, episode.pk)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=10)

    await communicator.send_json_to({"intent": "step", "action": "ls"})
    messages = await _until(communicator, r'id="step-1"[^>]*data-status="done"')

    assert any("data-seq" in m for m in messages)  # deltas were dispatched to the socket
    assert trips == []
    await communicator.disconnect()


async def test_it_refuses_an_invalid_action_before_anything_runs():
    project, user = await sync_to_async(helpers.project_with)()
    spec = {**helpers.TERMINAL_WORLD, "domain": "web", "initial_observation": "[1] button 'Go'"}
    episode = await sync_to_async(helpers.episode)(project, user, spec=spec)
    communicator = _communicator(user, episode.pk)
    await communicator.connect()
    await communicator.receive_from(timeout=10)

    await communicator.send_json_to({"action": "explode('1')"})
    reply = await communicator.receive_from(timeout=10)

    assert 'id="composer-validation"' in reply and "unknown action explode()" in reply
    assert await sync_to_async(Step.objects.filter(episode=episode).count)() == 0
    await communicator.disconnect()


async def test_it_composes_a_web_action_from_the_builder_fields(model_server):
    project, user = await sync_to_async(helpers.project_with)()
    model = await sync_to_async(helpers.endpoint)(project, model_server.base_url)
    spec = {**helpers.TERMINAL_WORLD, "domain": "web", "initial_observation": "[12] button 'Go'"}
    episode = await sync_to_async(helpers.episode)(project, user, spec=spec, model=model)
    communicator = _communicator(user, episode.pk)
    await communicator.connect()
    state = await communicator.receive_from(timeout=10)
    assert '<option value="12">12</option>' in state  # bids of the current page

    await communicator.send_json_to({"verb": "click", "element": "12", "action": ""})
    await _until(communicator, r'id="step-1"[^>]*data-status="done"')

    step = await sync_to_async(Step.objects.get)(episode=episode, index=1)
    assert step.action == "click('12')"
    await communicator.disconnect()


async def test_a_viewer_sees_the_episode_but_cannot_act():
    project, owner = await sync_to_async(helpers.project_with)()
    episode = await sync_to_async(helpers.episode)(project, owner)
    from django.contrib.auth import get_user_model

    from studio.core.models import Membership

    viewer = await sync_to_async(get_user_model().objects.create_user)("vic", "", "pw-12345678")
    await sync_to_async(Membership.objects.create)(project=project, user=viewer, role="viewer")
    communicator = _communicator(viewer, episode.pk)
    assert (await communicator.connect())[0]
    state = await communicator.receive_from(timeout=10)
    assert 'id="send-action"' not in state

    await communicator.send_json_to({"action": "ls"})
    reply = await communicator.receive_from(timeout=10)

    assert "Viewers cannot act" in reply
    assert await sync_to_async(Step.objects.count)() == 0
    await communicator.disconnect()


async def test_it_refuses_strangers_and_anonymous_sockets():
    project, owner = await sync_to_async(helpers.project_with)()
    episode = await sync_to_async(helpers.episode)(project, owner)
    _, stranger = await sync_to_async(helpers.project_with)("mallory")

    communicator = _communicator(stranger, episode.pk)
    assert await communicator.connect() == (False, 4404)
    await communicator.disconnect()

    anonymous = WebsocketCommunicator(
        application, f"/ws/episodes/{episode.pk}/", headers=[(b"origin", b"http://testserver")]
    )
    assert await anonymous.connect() == (False, 4401)
    await anonymous.disconnect()


async def test_a_socket_that_connects_mid_step_gets_every_character_once(slow_server):
    project, user = await sync_to_async(helpers.project_with)()
    model = await sync_to_async(helpers.endpoint)(project, slow_server.base_url)
    episode = await sync_to_async(helpers.episode)(project, user, model=model)
    first = _communicator(user, episode.pk)
    await first.connect()
    await first.receive_from(timeout=10)
    await first.send_json_to({"action": "cat /srv/app/README.md"})
    # Past the first flush of partial text to the database (about once a second), and
    # then some: the deltas since that flush are what a late page used to miss.
    await _until(first, r"data-seq", timeout=20)
    step = await sync_to_async(Step.objects.get)(episode=episode, index=1)
    for _ in range(100):
        await sync_to_async(step.refresh_from_db)()
        if step.partial_seq:
            break
        await first.receive_from(timeout=10)
    await _until(first, rf'data-seq="{step.partial_seq + 2}"', timeout=20)

    second = _communicator(user, episode.pk)
    await second.connect()
    state = await second.receive_from(timeout=10)
    assert 'id="step-1"' in state and 'data-status="running"' in state
    held = int(re.findall(r'id="step-1"[^>]*data-partial-seq="(\d+)"', state)[0])
    assert held > step.partial_seq + 1  # more than the database had: the buffered stream

    messages = await _until(second, r'id="step-1"[^>]*data-status="done"', timeout=60)
    seqs = [int(n) for m in messages for n in re.findall(r'data-seq="(\d+)"', m)]
    # Every delta after the state, in order, none missing and none it already held.
    assert seqs == list(range(held + 1, held + 1 + len(seqs)))
    assert state.count('id="step-1"') == 1
    await first.disconnect()
    await second.disconnect()
