"""Production mode end to end: a real Celery worker process answers through Redis."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.asyncio.client import connect

from tests.integration.stack import Stack

pytestmark = pytest.mark.slow


def test_healthz_reports_production_parts(stack: Stack):
    client = stack.login()

    data = client.get("/healthz").json()

    assert data["mode"] == "production"
    assert data["database"]["vendor"] == "postgresql" and data["database"]["ok"]
    assert data["channel_layer"]["backend"] == "ReconnectingPubSubChannelLayer"
    assert data["channel_layer"]["ok"] is True
    assert data["tasks"]["runner"] == "celery"
    assert any(name.startswith("w1@") for name in data["tasks"]["workers"])
    assert {"kind", "endpoint", "ok", "detail"} <= set(data["world_model"])


async def _ping(stack: Stack, headers: dict[str, str], timeout: float) -> str:
    async with connect(f"{stack.ws_url}/ws/status/", additional_headers=headers) as socket:
        await socket.send(json.dumps({"ping": "1"}))
        message = await asyncio.wait_for(socket.recv(), timeout)
        return str(message)


def test_a_task_run_by_the_worker_reaches_the_websocket_client(stack: Stack):
    client = stack.login()

    html = asyncio.run(_ping(stack, stack.ws_headers(client), timeout=20))

    assert "Round trip through Celery worker w1@" in html


def test_without_a_worker_nothing_answers(stack: Stack):
    client = stack.login()
    stack.stop_worker("w1")
    try:
        with pytest.raises(TimeoutError):
            asyncio.run(_ping(stack, stack.ws_headers(client), timeout=4))
        assert client.get("/healthz").json()["tasks"] == {
            "ok": False,
            "detail": "no Celery worker answers",
            "runner": "celery",
            "workers": [],
        }
    finally:
        stack.start_worker("w1")


def test_a_foreign_origin_cannot_open_a_socket(stack: Stack):
    client = stack.login()
    headers = {**stack.ws_headers(client), "Origin": "http://evil.example"}

    async def attempt() -> None:
        async with connect(f"{stack.ws_url}/ws/status/", additional_headers=headers):
            pass

    with pytest.raises(Exception, match="403"):
        asyncio.run(attempt())
