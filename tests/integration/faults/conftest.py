"""Real processes for fault tests: a private redis-server, the protocol test server
(``python -m simulator.serve``), and a production-mode studio on them.

The Redis server is this module's own (a free port, started with the Makefile's
``services`` options), so restarting it never disturbs other tests using 6379.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import psycopg
import pytest
from websockets.asyncio.client import connect

from tests.integration.stack import ROOT, Stack, free_port, production_stack, wait_until

# soft < hard < visibility, small enough that a lost task comes back within seconds.
LIMITS = {
    "STUDIO_TASK_SOFT_TIME_LIMIT": "8",
    "STUDIO_TASK_TIME_LIMIT": "10",
    "STUDIO_VISIBILITY_TIMEOUT": "12",
}
PASSWORD = "correct-horse-9"


class RedisServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_until(self.answers, 10, f"redis-server on {self.port}")

    def answers(self) -> bool:
        result = subprocess.run(
            ["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True
        )
        return result.stdout.strip() == "PONG"

    def shutdown(self) -> None:
        subprocess.run(["redis-cli", "-p", str(self.port), "shutdown", "nosave"], check=False)
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
            if self.process.poll() is None:
                self.process.kill()
            self.process = None


def start_model_server(*args: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator.serve", "--port", str(port), *args],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{url}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(up, 30, f"protocol test server on {port}")
    return process, url


@dataclass
class Faults:
    stack: Stack
    redis: RedisServer
    fast_url: str
    slow_url: str
    project_id: int
    revision_id: int
    client: httpx.Client

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        dsn = f"postgresql://postgres@127.0.0.1:5432/{self.stack.database}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def episode(self, base_url: str, model: str = "world-studio-test", timeout: float = 5) -> int:
        """A terminal episode on its own endpoint (the protocol test server, or a fault)."""
        code = (
            "from studio.core.models import ModelEndpoint, Project\n"
            "from studio.episodes.services import episode_create\n"
            "from studio.worlds.models import WorldRevision\n"
            f"p = Project.objects.get(pk={self.project_id})\n"
            f"e = ModelEndpoint.objects.create(project=p, name='ep-' + str(ModelEndpoint.objects.count()), kind='openai', base_url={base_url!r}, model={model!r}, config={{'max_retries': 0, 'timeout': {timeout}}})\n"
            f"r = WorldRevision.objects.get(pk={self.revision_id})\n"
            "print(episode_create(project=p, world_revision=r, endpoint=e).pk)\n"
        )
        return int(self.stack.shell(code).strip().splitlines()[-1])

    def set_model(self, episode: int, *, base_url: str, model: str = "world-studio-test") -> None:
        self.sql(
            "UPDATE core_modelendpoint SET base_url = %s, model = %s WHERE id = "
            "(SELECT endpoint_id FROM episodes_episode WHERE id = %s)",
            base_url, model, episode,
        )  # fmt: skip

    def steps(self, episode: int) -> list[dict[str, Any]]:
        rows = self.sql(
            "SELECT index, status, error, error_kind, attempts, observation "
            "FROM episodes_step WHERE episode_id = %s ORDER BY index",
            episode,
        )
        keys = ("index", "status", "error", "error_kind", "attempts", "observation")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def wait_step(
        self, episode: int, index: int, statuses: tuple[str, ...], timeout: float = 40
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            steps = [s for s in self.steps(episode) if s["index"] == index]
            if steps and steps[0]["status"] in statuses:
                return steps[0]
            time.sleep(0.1)
        raise TimeoutError(f"step {index} of episode {episode}: {self.steps(episode)}")

    def submit(self, episode: int, action: str = "ls -la /srv/app") -> str:
        """Send an action over the episode's WebSocket, as the page does; the answer."""
        return asyncio.run(self._submit(episode, action))

    async def _submit(self, episode: int, action: str) -> str:
        url = f"{self.stack.ws_url}/ws/episodes/{episode}/"
        async with connect(url, additional_headers=self.stack.ws_headers(self.client)) as ws:
            await asyncio.wait_for(ws.recv(), 10)  # the state on connect
            await ws.send(json.dumps({"intent": "step", "action": action}))
            return str(await asyncio.wait_for(ws.recv(), 10))

    def retry(self, episode: int, index: int) -> None:
        response = self.client.post(f"/episodes/{episode}/steps/{index}/retry")
        assert response.status_code in {200, 204, 302}, response.text[:300]


@pytest.fixture(scope="module")
def faults() -> Iterator[Faults]:
    from tests.conftest import require_service

    require_service("PostgreSQL", 5432)
    require_service("Redis", 6379)  # production_stack flushes a database number there
    redis = RedisServer()
    redis.start()
    fast, fast_url = start_model_server("--tokens-per-s", "400", "--reasoning")
    # ~3 s per step, streamed: time to kill a worker or drop a socket mid-stream.
    slow, slow_url = start_model_server("--latency-ms", "500", "--tokens-per-s", "12")
    try:
        env = {**LIMITS, "STUDIO_REDIS_URL": redis.url}
        with production_stack(workers=1, extra_env=env) as stack:
            client = stack.login()
            ids = stack.shell(
                "from django.contrib.auth import get_user_model\n"
                "from studio.core.models import Membership, Project\n"
                "from studio.worlds.services import world_create\n"
                "u = get_user_model().objects.get(username='alice')\n"
                "p = Project.objects.create(name='Faults', slug='faults')\n"
                "Membership.objects.create(project=p, user=u, role='owner')\n"
                "w = world_create(project=p, user=u, spec={'domain': 'terminal', 'title': 'Box',"
                " 'premise': 'A Debian box with a Python project in /srv/app.',"
                " 'initial_observation': 'alice@box:/srv/app$ '})\n"
                "print(p.pk, w.head.pk)\n"
            )
            project_id, revision_id = (int(x) for x in ids.strip().splitlines()[-1].split())
            yield Faults(stack, redis, fast_url, slow_url, project_id, revision_id, client)
    finally:
        for process in (fast, slow):
            process.terminate()
            process.wait(timeout=10)
        redis.shutdown()
