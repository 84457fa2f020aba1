"""Faults with real processes: model server failures, a killed worker, dropped sockets,
a restarted Redis. The database stays the source of truth through all of them.

Tests run in file order (the Redis restart last): ``-p no:randomly`` is not needed,
each test builds its own episode, but the restart test must not overlap the others.
"""

from __future__ import annotations

import asyncio
import re
import signal
import time

import pytest
from django.utils.html import escape
from websockets.asyncio.client import connect

from tests.integration.faults.conftest import Faults
from tests.integration.stack import free_port

pytestmark = pytest.mark.slow


def _page(faults: Faults, episode: int) -> str:
    response = faults.client.get(f"/episodes/{episode}/")
    assert response.status_code == 200
    return response.text


@pytest.mark.parametrize(
    ("model", "timeout"),
    [
        ("fault:500", 5),  # the server answers 500
        ("fault:disconnect-after:5", 5),  # the stream is cut after 5 tokens
        ("fault:stall-after:3", 2),  # slow: tokens stop coming
        ("down", 5),  # nothing listens on the port
    ],
)
def test_it_fails_the_step_clearly_and_a_retry_works(
    faults: Faults, model: str, timeout: float
) -> None:
    url = f"http://127.0.0.1:{free_port()}" if model == "down" else faults.fast_url
    episode = faults.episode(url, model="world-studio-test" if model == "down" else model,
                             timeout=timeout)  # fmt: skip
    faults.submit(episode)

    failed = faults.wait_step(episode, 1, ("failed", "done"))
    assert failed["status"] == "failed"
    assert failed["error"].strip() and failed["error_kind"].strip()
    page = _page(faults, episode)
    assert "step-error" in page and escape(failed["error"][:60]) in page
    assert re.search(r'id="step-1" class="step failed"', page)

    faults.set_model(episode, base_url=faults.fast_url)
    faults.retry(episode, 1)
    done = faults.wait_step(episode, 1, ("done",))
    assert done["attempts"] == 2 and done["observation"].strip()
    assert [s["status"] for s in faults.steps(episode)] == ["done"]  # intact, no extra step
    faults.submit(episode, "cat README.md")
    assert faults.wait_step(episode, 2, ("done", "failed"))["status"] == "done"


def test_a_server_error_once_then_success_needs_only_a_retry(faults: Faults) -> None:
    episode = faults.episode(faults.fast_url, model="fault:500-once")
    faults.submit(episode)
    assert faults.wait_step(episode, 1, ("failed", "done"))["status"] == "failed"
    faults.retry(episode, 1)
    assert faults.wait_step(episode, 1, ("done",))["attempts"] == 2


def test_a_worker_killed_mid_step_leaves_the_step_done_once_or_failed_and_retryable(
    faults: Faults,
) -> None:
    episode = faults.episode(faults.slow_url)
    faults.submit(episode)
    faults.wait_step(episode, 1, ("running",), timeout=20)
    time.sleep(0.5)  # mid-stream
    faults.stack.stop_worker("w1", signal.SIGKILL)
    # A worker restores unacknowledged messages older than the visibility timeout (12 s)
    # when it starts, and every 10 s after that (settings: unacked_restore_interval).
    time.sleep(13)
    faults.stack.start_worker("w2")
    try:
        step = faults.wait_step(episode, 1, ("done", "failed"), timeout=30)
        if step["status"] == "failed":
            faults.retry(episode, 1)
            step = faults.wait_step(episode, 1, ("done",), timeout=30)
        assert step["status"] == "done"
        assert len(faults.steps(episode)) == 1
    finally:
        faults.stack.stop_worker("w2")
        faults.stack.start_worker("w1")


async def _watch(faults: Faults, episode: int, seconds: float) -> list[str]:
    """Messages a browser gets on the episode socket during ``seconds``."""
    url = f"{faults.stack.ws_url}/ws/episodes/{episode}/"
    messages: list[str] = []
    async with connect(url, additional_headers=faults.stack.ws_headers(faults.client)) as ws:
        messages.append(str(await asyncio.wait_for(ws.recv(), 15)))  # the state, however slow
        deadline = asyncio.get_running_loop().time() + seconds
        while (left := deadline - asyncio.get_running_loop().time()) > 0:
            try:
                messages.append(str(await asyncio.wait_for(ws.recv(), left)))
            except TimeoutError:
                break
    return messages


def _seqs(messages: list[str]) -> list[int]:
    return [int(n) for m in messages for n in re.findall(r'data-seq="(\d+)"', m)]


def _streamed_view(messages: list[str]) -> tuple[str, list[int]]:
    """Step 1's streamed observation text as the browser shows it before the final
    fragment: each (re-)render of the running step sets it, each newer delta appends."""
    text = ""
    seqs: list[int] = []
    render = re.compile(
        r'id="step-1" class="step (?:running|pending)"[^>]*data-partial-seq="(\d+)"'
        r'.*?id="step-1-observation">(.*?)</pre>',
        re.S,
    )
    delta = re.compile(r'beforeend:#step-1-observation"><span data-seq="(\d+)">(.*?)</span>', re.S)
    for message in messages:
        if 'class="step done"' in message:
            break
        for seq, partial in render.findall(message):
            text, seqs = partial, [*seqs, int(seq)]
        for seq, chunk in delta.findall(message):
            seqs.append(int(seq))
            text += chunk
    return text, seqs


def test_a_client_that_disconnects_and_reconnects_loses_and_doubles_nothing(
    faults: Faults,
) -> None:
    episode = faults.episode(faults.slow_url)
    faults.submit(episode)
    faults.wait_step(episode, 1, ("running",), timeout=20)
    first = asyncio.run(_watch(faults, episode, 1.0))  # then the socket drops mid-stream
    second = asyncio.run(_watch(faults, episode, 15))  # a reconnect, until after the end
    step = faults.wait_step(episode, 1, ("done", "failed"))
    assert step["status"] == "done"

    text, seqs = _streamed_view(second)
    assert len(seqs) > 1, "the reconnected socket should have seen the stream go on"
    assert seqs == sorted(set(seqs)), "a delta was sent twice or out of order"
    # What the page showed while streaming is part of the result, never doubled. (Known:
    # under load a reconnecting socket sometimes misses the stream's first delta, e.g. the
    # leading "$"; the final fragment then corrects the page. Reported to the episodes app.)
    observation = escape(step["observation"])
    assert text.strip() and text.strip()[:40] in observation
    assert observation[:200] in "".join(second)  # the final fragment replaced the stream
    assert _seqs(first) == sorted(set(_seqs(first)))
    again = asyncio.run(_watch(faults, episode, 1))
    assert again[0].count('id="step-1"') == 1 and 'id="step-2"' not in again[0]


def test_after_a_redis_restart_a_reconnecting_browser_resyncs_from_the_database(
    faults: Faults,
) -> None:
    """Runs last: restarts this module's own redis-server in the middle of a step.

    The step running at that moment usually finishes (done); sometimes its task hangs
    and it stays 'running' (reported: the same stuck-step gap as a killed worker). Either
    way a browser that reconnects sees exactly what the database holds, and new steps
    work over the new Redis.
    """
    episode = faults.episode(faults.slow_url)
    faults.submit(episode)
    faults.wait_step(episode, 1, ("running",), timeout=20)
    faults.redis.shutdown()
    faults.redis.start()
    try:
        step = faults.wait_step(episode, 1, ("done", "failed"), timeout=30)
    except TimeoutError:
        step = faults.steps(episode)[0]

    state = asyncio.run(_watch(faults, episode, 1))[0]
    assert state.count('id="step-1"') == 1 and 'id="step-2"' not in state
    assert f'data-status="{step["status"]}"' in state
    if step["status"] == "done":
        assert escape(step["observation"])[:200] in state
    # The pipeline works end to end over the new Redis: a new episode's step.
    fresh = faults.episode(faults.fast_url)
    faults.submit(fresh, "pwd")
    assert faults.wait_step(fresh, 1, ("done", "failed"), timeout=60)["status"] == "done"
