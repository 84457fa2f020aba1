"""The clients trainers use, against a live embedded studio: StudioEnv, the async client,
the official openai package, and a schemathesis fuzz run of the OpenAPI schema."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from simulator.client import AsyncStudioClient, StudioAPIError, StudioEnv
from tests.integration.api.live import LiveStudio, live_studio

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def live() -> Iterator[LiveStudio]:
    with live_studio() as running:
        yield running


def test_the_gymnasium_style_env_runs_a_scenario_to_termination(live):
    env = StudioEnv(live.base_url, live.token, live.scenario, seed=3)

    observation, info = env.reset()
    steps = [env.step(action) for action in ("make", "make test", "echo BUILD OK")]
    with pytest.raises(StudioAPIError) as after_end:
        env.step("ls")
    state = env.state()
    env.close()

    assert observation == "user@box:~$ " and info["seed"] == 3
    assert [s[2] for s in steps] == [False, False, True]
    assert steps[-1][1] == 1.0 and steps[-1][4]["step"] == 3
    assert after_end.value.status == 409
    assert state["steps"] == 3 and state["source"] == "api"


def test_the_async_client_runs_many_envs_at_once(live):
    async def run() -> list[bool]:
        async with AsyncStudioClient(live.base_url, live.token) as client:
            created = await asyncio.gather(
                *(client.create(live.scenario, seed=i) for i in range(8))
            )
            results = await asyncio.gather(
                *(client.step(env_id, "echo BUILD OK") for env_id, _, _ in created)
            )
            return [r[2] for r in results]

    assert asyncio.run(run()) == [True] * 8


def test_the_openai_client_talks_to_the_drop_in_endpoint(live):
    client = openai.OpenAI(base_url=f"{live.base_url}/v1", api_key=live.token)
    model = f"scenario-{live.scenario}"

    models = [m.id for m in client.models.list()]
    first = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "make"}]
    )
    observation = first.choices[0].message.content
    stream = client.chat.completions.create(
        model=model,
        messages=[
            {"role": "user", "content": "make"},
            {"role": "assistant", "content": observation},
            {"role": "user", "content": "echo BUILD OK"},
        ],
        stream=True,
    )
    chunks = list(stream)
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)

    assert model in models
    assert "make" in (observation or "")
    assert "BUILD OK" in streamed
    assert chunks[-1].choices[0].finish_reason == "stop"
    extra = chunks[-1].model_extra or {}
    assert extra["world_studio"]["terminated"] is True
    assert (
        extra["world_studio"]["episode_id"]
        == (first.model_extra or {})["world_studio"]["episode_id"]
    )
    with pytest.raises(openai.APIStatusError) as refused:
        client.chat.completions.create(
            model="scenario-999999", messages=[{"role": "user", "content": "ls"}]
        )
    assert refused.value.status_code == 404


MAX_EXAMPLES_PER_OPERATION = 40  # 8 operations: about 320 requests


def test_fuzzing_the_schema_finds_no_server_error(live):
    """schemathesis generates requests from the served schema; none may get a 5xx."""
    document = httpx.get(f"{live.base_url}/api/v1/openapi.json").json()
    schema = schemathesis.openapi.from_dict(document)
    headers = {"Authorization": f"Bearer {live.token}"}
    seen: list[int] = []
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=MAX_EXAMPLES_PER_OPERATION,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def fuzz(case: Any) -> None:
            response = case.call(base_url=live.base_url, headers=headers, timeout=60)
            seen.append(response.status_code)
            assert response.status_code < 500, (
                f"{case.method} {case.formatted_path} {case.body!r}: {response.text[:300]}"
            )

        fuzz()

    assert len(operations) == 8
    assert len(seen) >= 8 * 10  # it really sent requests
    assert any(400 <= status < 500 for status in seen)


def test_the_api_skips_the_browser_middleware_but_keeps_the_security_headers(live):
    """studio/api/handler.py: an API step pays for no session, CSRF or clickjacking hook."""
    auth = {"Authorization": f"Bearer {live.token}"}
    api = httpx.get(f"{live.base_url}/api/v1/scenarios", headers=auth)
    site = httpx.get(f"{live.base_url}/login/")

    assert api.status_code == 200 and site.status_code == 200
    assert api.headers["X-Content-Type-Options"] == "nosniff"
    assert api.headers["Referrer-Policy"] == site.headers["Referrer-Policy"]
    assert "X-Frame-Options" not in api.headers and "X-Frame-Options" in site.headers
    assert "csrftoken" not in api.headers.get("Set-Cookie", "")
    tokens_page = httpx.get(f"{live.base_url}/api/tokens/")  # a page under /api/: full stack
    assert tokens_page.status_code == 302 and "X-Frame-Options" in tokens_page.headers
