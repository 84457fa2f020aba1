"""Production mode under concurrent env sessions: a bounded number of database connections.

Each concurrent API request used to keep a Postgres connection of its own (Django gives
every ASGI request a thread, and connections were persistent per thread), so 64 waiting
env steps meant 64 connections and Postgres's "too many clients" as 500s. With a pool per
process the count stays bounded whatever the load; when the pool stays empty too long the
API answers 503 with Retry-After (before storing anything), never 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simulator.client import AsyncStudioClient
from simulator.serve import ServerOptions, start_server_in_thread
from tests.conftest import require_service
from tests.integration.stack import Stack, _admin_connection, production_stack

pytestmark = pytest.mark.slow

SETUP = """
import json
from tests.integration.api.factories import make_project, make_scenario, make_user
from studio.api.services import token_create
user = make_user("trainer")
scenario = make_scenario(make_project(user, slug="rl"), max_steps=1000, success=[])
_, clear = token_create(user=user, name="pool")
print(json.dumps({"scenario": scenario.pk, "token": clear}))
"""
SESSIONS = 48
POOL = 3


@contextlib.contextmanager
def studio(**extra_env: str) -> Iterator[tuple[Stack, dict[str, Any]]]:
    require_service("PostgreSQL", 5432)
    require_service("Redis", 6379)
    with (
        start_server_in_thread(ServerOptions(latency_ms=50)) as model,
        production_stack(
            workers=1,
            extra_env={
                "STUDIO_MODEL_URL": model.base_url,
                "STUDIO_MODEL_NAME": "world-studio-test",
                "STUDIO_API_RATE_PER_S": "100000",
                "STUDIO_API_RATE_BURST": "100000",
                **extra_env,
            },
        ) as stack,
    ):
        yield stack, json.loads(stack.shell(SETUP).strip().splitlines()[-1])


@contextlib.contextmanager
def peak_connections(database: str) -> Iterator[list[int]]:
    """The most connections to ``database`` seen while the block runs (sampled every 20 ms)."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        with _admin_connection() as conn:
            while not done.is_set():
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)
                ).fetchone()
                peak[0] = max(peak[0], int(row[0]) if row else 0)
                done.wait(0.02)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        done.set()
        thread.join(timeout=5)


async def session(client: AsyncStudioClient, scenario: int, steps: int) -> None:
    env_id, _, _ = await client.create(scenario)
    for _ in range(steps):
        await client.step(env_id, "make")
    await client.close(env_id)


def test_many_sessions_share_a_few_connections_and_all_succeed() -> None:
    with studio(STUDIO_DB_POOL_SIZE=str(POOL)) as (stack, data):

        async def run() -> list[BaseException | None]:
            async with AsyncStudioClient(stack.base_url, data["token"], timeout=120) as client:
                return await asyncio.gather(
                    *(session(client, data["scenario"], 2) for _ in range(SESSIONS)),
                    return_exceptions=True,
                )

        with peak_connections(stack.database) as peak:
            outcomes = asyncio.run(run())
        log = (stack.var_dir / "web.log").read_text(errors="replace")
    assert [o for o in outcomes if o is not None] == []
    # web + one worker child (+ its parent's own), each a pool of POOL at most
    assert peak[0] <= 3 * POOL, peak[0]
    assert "too many clients" not in log


def test_an_exhausted_pool_answers_503_with_retry_after_never_500() -> None:
    # More database calls at once than the pool has connections (the default keeps
    # them below it, queued): what happens when the pool runs dry anyway.
    with studio(
        STUDIO_DB_POOL_SIZE="1", STUDIO_DB_POOL_TIMEOUT="0.1", STUDIO_DB_CONCURRENCY="64"
    ) as (stack, data):

        async def run() -> list[httpx.Response]:
            headers = {"Authorization": f"Bearer {data['token']}"}
            async with httpx.AsyncClient(
                base_url=stack.base_url, headers=headers, timeout=60
            ) as client:
                return await asyncio.gather(
                    *(
                        client.post("/api/v1/envs", json={"scenario": data["scenario"]})
                        for _ in range(128)
                    )
                )

        responses = asyncio.run(run())
    statuses = Counter(r.status_code for r in responses)
    assert set(statuses) <= {201, 503}, statuses
    assert statuses[503] > 0, statuses
    busy = next(r for r in responses if r.status_code == 503)
    assert busy.headers["Retry-After"] == "1"
    assert busy.json()["error"]["code"] == "overloaded"
