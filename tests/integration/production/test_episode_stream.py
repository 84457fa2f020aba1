"""Production mode: a 5-step episode streamed through a Celery worker, Redis and uvicorn.

The world model is the protocol test server in its own process (STUDIO_MODEL_URL),
so every part runs as it would in a deployment.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator

import pytest
from websockets.asyncio.client import connect

from tests.integration.stack import (
    Stack,
    model_server_process,
    production_stack,
)

pytestmark = pytest.mark.slow

DONE = r'id="step-{n}"[^>]*data-status="done"'


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    with model_server_process("--latency-ms", "150", "--tokens-per-s", "25", "--reasoning") as url:
        yield url


@pytest.fixture(scope="module")
def stack(model_url: str) -> Iterator[Stack]:
    from tests.conftest import require_service

    require_service("PostgreSQL", 5432)
    require_service("Redis", 6379)
    with production_stack(workers=1, extra_env={"STUDIO_MODEL_URL": model_url}) as running:
        yield running


def _episode(stack: Stack, username: str) -> int:
    out = stack.shell(
        "from django.contrib.auth import get_user_model\n"
        "from studio.core.models import Project, Membership\n"
        "from studio.worlds.services import world_create\n"
        "from studio.episodes.services import episode_create\n"
        f"u = get_user_model().objects.get(username={username!r})\n"
        f"p = Project.objects.create(name='Stream {username}', slug='stream-{username}')\n"
        "Membership.objects.create(project=p, user=u, role='owner')\n"
        "w = world_create(project=p, user=u, spec={'domain': 'terminal', 'title': 'Box',"
        " 'initial_observation': '$ '})\n"
        "e = episode_create(project=p, user=u, world_revision=w.head)\n"
        "print(e.pk)\n"
    )
    return int(out.strip().splitlines()[-1])


async def _until(socket, pattern: str, seen: list[str], timeout: float = 60) -> None:
    while True:
        message = str(await asyncio.wait_for(socket.recv(), timeout))
        seen.append(message)
        if re.search(pattern, message):
            return


async def _run(stack: Stack, headers: dict[str, str], episode: int) -> dict[str, object]:
    url = f"{stack.ws_url}/ws/episodes/{episode}/"
    per_step: dict[int, list[str]] = {}
    reconnect_state = ""
    async with connect(url, additional_headers=headers) as socket:
        await asyncio.wait_for(socket.recv(), 20)  # the state on connect
        for n in (1, 2):
            seen: list[str] = []
            await socket.send(json.dumps({"intent": "step", "action": f"echo step {n}"}))
            await _until(socket, DONE.format(n=n), seen)
            per_step[n] = seen
        # Step 3: leave in the middle of the stream, come back, and see it through.
        await socket.send(json.dumps({"intent": "step", "action": "echo step 3"}))
        before: list[str] = []
        await _until(socket, r"data-seq", before)
    await asyncio.sleep(0.2)  # the stream goes on without us
    async with connect(url, additional_headers=headers) as socket:
        reconnect_state = str(await asyncio.wait_for(socket.recv(), 20))
        seen = []
        if not re.search(DONE.format(n=3), reconnect_state):
            await _until(socket, DONE.format(n=3), seen)
        per_step[3] = seen
        for n in (4, 5):
            seen = []
            await socket.send(json.dumps({"intent": "step", "action": f"echo step {n}"}))
            await _until(socket, DONE.format(n=n), seen)
            per_step[n] = seen
    return {"per_step": per_step, "reconnect_state": reconnect_state}


def test_a_five_step_episode_streams_through_the_worker_and_survives_a_reconnect(stack: Stack):
    client = stack.login("streamer")
    episode = _episode(stack, "streamer")

    result = asyncio.run(_run(stack, stack.ws_headers(client), episode))

    per_step = result["per_step"]
    assert isinstance(per_step, dict)
    for n, messages in per_step.items():
        seqs = [int(s) for m in messages for s in re.findall(r'data-seq="(\d+)"', m)]
        if n == 3:
            continue  # checked below: it is the reconnect
        final = next(i for i, m in enumerate(messages) if re.search(DONE.format(n=n), m))
        first_delta = next(i for i, m in enumerate(messages) if "data-seq" in m)
        assert first_delta < final, f"step {n}: no delta before the final fragment"
        assert seqs == sorted(seqs) and len(seqs) == len(set(seqs)) >= 2, (n, seqs)
    state = str(result["reconnect_state"])
    # After the reconnect: only text the state did not already hold, in order, once each.
    step3 = per_step[3]
    match = re.search(r'id="step-3"[^>]*data-partial-seq="(\d+)"', state)
    assert match is not None
    held = int(match.group(1))
    seqs3 = [int(s) for m in step3 for s in re.findall(r'data-seq="(\d+)"', m)]
    # No gap either: the state held the stream up to its last delta (the worker's
    # stream buffer, not the once-a-second flush), and the socket gets the rest.
    assert seqs3 == list(range(held + 1, held + 1 + len(seqs3)))
    assert re.search(DONE.format(n=3), step3[-1])
    assert 'id="step-1"' in state and 'id="step-2"' in state and 'id="step-3"' in state
    assert re.search(r'id="step-3"[^>]*data-status="running"', state)  # came back mid-step
    # The database has five steps, each once, all done, run by the Celery worker.
    page = client.get(f"/episodes/{episode}/").text
    assert len(re.findall(r'<li id="step-\d+"', page)) == 5
    assert len(re.findall(r'data-status="done"', page)) == 5
    assert "echo step 5" in page
    worker_log = (stack.var_dir / "worker-w1.log").read_text()
    assert worker_log.count("episodes.run_step") >= 5
