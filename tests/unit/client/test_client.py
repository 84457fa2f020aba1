"""The env clients against a fake studio (httpx.MockTransport): requests, results, errors."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from simulator.client import AsyncStudioClient, StudioAPIError, StudioEnv


class FakeStudio:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, Any]]] = []
        self.limited = 0
        self.overloaded = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else {}
        self.requests.append((request.method, request.url.path, body))
        assert request.headers["Authorization"] == "Bearer wst_test"
        path = request.url.path
        if self.overloaded:
            self.overloaded -= 1
            return httpx.Response(
                503,
                headers={"Retry-After": "0"},
                json={"error": {"code": "overloaded", "message": "busy"}},
            )
        if self.limited:
            self.limited -= 1
            return httpx.Response(
                429,
                headers={"Retry-After": "0"},
                json={"error": {"code": "rate_limited", "message": "slow"}},
            )
        if path == "/api/v1/envs":
            return httpx.Response(
                201, json={"id": 5, "observation": "$ ", "info": {"seed": body["seed"]}}
            )
        if path == "/api/v1/envs/5/step":
            if body["action"] == "bad":
                return httpx.Response(
                    422, json={"error": {"code": "invalid_action", "message": "nope"}}
                )
            done = body["action"] == "finish"
            return httpx.Response(
                200,
                json={
                    "observation": f"ran {body['action']}",
                    "reward": float(done),
                    "terminated": done,
                    "truncated": False,
                    "info": {"step": 1},
                },
            )
        if path == "/api/v1/envs/5/close":
            return httpx.Response(200, json={"id": 5, "status": "closed"})
        return httpx.Response(
            404, json={"error": {"code": "not_found", "message": "No such object"}}
        )


def test_it_resets_steps_and_closes():
    studio = FakeStudio()
    env = StudioEnv("http://studio", "wst_test", 3, seed=9, transport=httpx.MockTransport(studio))

    observation, info = env.reset()
    step = env.step("ls")
    final = env.step("finish")
    env.close()

    assert (observation, info) == ("$ ", {"seed": 9})
    assert step == ("ran ls", 0.0, False, False, {"step": 1})
    assert final[1:4] == (1.0, True, False)
    assert [r[1] for r in studio.requests] == [
        "/api/v1/envs",
        "/api/v1/envs/5/step",
        "/api/v1/envs/5/step",
        "/api/v1/envs/5/close",
    ]
    assert studio.requests[0][2] == {"scenario": 3, "seed": 9}


def test_an_error_answer_raises_with_its_code():
    env = StudioEnv("http://studio", "wst_test", 3, transport=httpx.MockTransport(FakeStudio()))
    env.reset()

    with pytest.raises(StudioAPIError) as caught:
        env.step("bad")

    assert (caught.value.status, caught.value.code, caught.value.message) == (
        422,
        "invalid_action",
        "nope",
    )


def test_step_before_reset_is_an_error():
    env = StudioEnv("http://studio", "wst_test", 3, transport=httpx.MockTransport(FakeStudio()))

    with pytest.raises(RuntimeError):
        env.step("ls")


def test_rate_limits_are_waited_out():
    studio = FakeStudio()
    studio.limited = 2
    env = StudioEnv("http://studio", "wst_test", 3, transport=httpx.MockTransport(studio))

    observation, _ = env.reset(seed=1)

    assert observation == "$ " and len(studio.requests) == 3


async def test_an_overloaded_studio_is_asked_again_after_retry_after():
    studio = FakeStudio()
    studio.overloaded = 2
    async with AsyncStudioClient(
        "http://studio", "wst_test", transport=httpx.MockTransport(studio)
    ) as client:
        env_id, _, _ = await client.create(3, seed=1)

    assert env_id == 5 and len(studio.requests) == 3


async def test_the_async_client_drives_many_envs():
    studio = FakeStudio()
    async with AsyncStudioClient(
        "http://studio", "wst_test", transport=httpx.MockTransport(studio)
    ) as client:
        env_id, observation, _ = await client.create(3, seed=1)
        result = await client.step(env_id, "finish")
        await client.close(env_id)

    assert (env_id, observation) == (5, "$ ")
    assert result[2] is True
    assert studio.requests[-1][1] == "/api/v1/envs/5/close"


def test_the_client_does_not_import_django():
    import subprocess
    import sys

    code = "import sys, simulator.client; assert 'django' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
