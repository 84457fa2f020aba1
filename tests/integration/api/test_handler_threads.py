"""The API handler starts no thread per request (Django's ASGI handler starts one, with a
thread pool, for every request's ``ThreadSensitiveContext``)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from studio.api.handler import ApiHandler


async def _get(handler: ApiHandler, path: str) -> int:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost")],
        "client": ("127.0.0.1", 5000),
        "server": ("localhost", 80),
    }
    sent: list[dict[str, Any]] = []
    requests = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if requests:
            return requests.pop()
        await asyncio.Future()  # no disconnect: Django cancels this wait once it has answered
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        sent.append(dict(message))

    await handler(scope, receive, send)
    return int(sent[0]["status"])


@pytest.mark.django_db  # the request's end closes old connections
def test_requests_after_the_first_start_no_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    handler = ApiHandler()
    started: list[str] = []
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    async def run() -> list[int]:
        statuses = [await _get(handler, "/api/v1/openapi.json")]  # warms the lanes' threads
        started.clear()
        for _ in range(5):
            statuses.append(await _get(handler, "/api/v1/openapi.json"))
        return statuses

    monkeypatch.setattr(threading.Thread, "start", counted)
    assert asyncio.run(run()) == [200] * 6
    assert started == []
