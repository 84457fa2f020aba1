"""Live review: judge scores and verdicts reach an open review page over its WebSocket."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from simulator.serve import ServerOptions
from simulator.serve.threaded import start_server_in_thread
from studio.core.models import Membership, Project
from studio.traces import trajectory_judging, turn_judging
from studio.traces.consumers import SimulationProgressConsumer
from studio.traces.models import JudgeScore
from tests.conftest import FIXTURES
from tests.integration.traces.simulations import imported_trace, judge_endpoint, simulate

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE_ANSWER = (
    '<final_evaluation>\n```json\n{"strengths": [], "weaknesses": ["<img src=x onerror=alert(1)>"], '
    '"scores": {"format": 4, "factuality": 2, "consistency": 3, "realism": 4, "quality": 3}}\n```\n'
    "</final_evaluation>"
)
TRAJECTORY_ANSWER = '{"scores": {"fidelity": 4}, "summary": "<b>steady</b>"}'


def _setup():
    user = get_user_model().objects.create_user("alice", "", "correct-horse-9")
    project = Project.objects.create(name="Live", slug="live")
    Membership.objects.create(project=project, user=user, role="owner")
    simulation = simulate(imported_trace(project, FIXTURES), ["a", "b", "c"])
    return user, project, simulation


async def _connect(user, simulation) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        SimulationProgressConsumer.as_asgi(), f"/ws/traces/simulations/{simulation.pk}/"
    )
    communicator.scope["user"] = user
    communicator.scope["url_route"] = {"kwargs": {"pk": simulation.pk}}
    assert (await communicator.connect())[0]
    assert 'id="sim-progress"' in await communicator.receive_from(timeout=10)
    return communicator


@override_settings(JUDGE_CONCURRENCY=3)
async def test_each_judge_score_reaches_the_page_as_an_escaped_badge():
    user, project, simulation = await sync_to_async(_setup)()
    communicator = await _connect(user, simulation)
    with start_server_in_thread(ServerOptions(replay=[HOSTILE_ANSWER])) as server:
        endpoint = await sync_to_async(judge_endpoint)(project, server.base_url)
        judged = await sync_to_async(turn_judging.judge_simulation)(
            simulation_id=simulation.pk, endpoint_id=endpoint.pk
        )
    assert judged == 3
    badges = {}
    for _ in range(3):
        message = (await communicator.receive_from(timeout=10)).strip()
        found = re.match(
            r'<span id="turn-badges-(\d)" class="turn-badges" data-judge="55">', message
        )
        assert found, message
        badges[int(found.group(1))] = message
    assert sorted(badges) == [1, 2, 3]  # one event per turn
    for message in badges.values():
        assert '<span class="pill accent"' in message and ">55</span>" in message
        assert "<img" not in message and "&lt;img src=x onerror=alert(1)&gt;" in message
    assert await sync_to_async(JudgeScore.objects.count)() == 3
    assert await communicator.receive_nothing()
    await communicator.disconnect()


async def test_a_verdict_saved_by_a_reviewer_updates_the_badges_of_every_open_page():
    user, project, simulation = await sync_to_async(_setup)()
    communicator = await _connect(user, simulation)
    turn = await sync_to_async(simulation.turns.get)(index=2)
    client = Client()
    await sync_to_async(client.force_login)(user)
    response = await sync_to_async(client.post)(
        f"/traces/turns/{turn.pk}/annotate/", {"verdict": "reject"}
    )
    assert response.status_code == 200
    message = (await communicator.receive_from(timeout=10)).strip()
    assert message.startswith('<span id="turn-badges-2"')
    assert '<span class="pill bad">r</span>' in message
    await communicator.disconnect()


async def test_the_trajectory_verdict_reaches_the_page_as_its_escaped_card():
    user, project, simulation = await sync_to_async(_setup)()
    communicator = await _connect(user, simulation)
    with start_server_in_thread(ServerOptions(replay=[TRAJECTORY_ANSWER])) as server:
        endpoint = await sync_to_async(judge_endpoint)(project, server.base_url)
        await sync_to_async(trajectory_judging.trajectory_judge_run)(
            simulation_id=simulation.pk, endpoint_id=endpoint.pk
        )
    message = (await communicator.receive_from(timeout=10)).strip()
    assert message.startswith('<section class="card" id="trajectory-judge">')
    assert '<strong id="trajectory-total">75.0</strong>' in message
    assert "&lt;b&gt;steady&lt;/b&gt;" in message and "<b>steady" not in message
    await communicator.disconnect()
