"""The API handler starts no thread per request (Django's ASGI handler starts one, with a
thread pool, for every request's ``ThreadSensitiveContext``), and sends the request
signals without a trip to the process's sync thread (Django's takes two)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from django.core import signals

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


@pytest.mark.django_db
def test_a_request_sends_its_signals_without_a_trip_to_the_sync_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handler = ApiHandler()
    trips: list[object] = []
    signalled: list[tuple[str, str]] = []
    trip = SyncToAsync.__call__

    async def counted(self: SyncToAsync[Any, Any], *args: Any, **kwargs: Any) -> Any:
        # Under pytest the view's own database work takes this path too (studio.testing).
        if self.func.__qualname__ != "db_call.<locals>.call":
            trips.append(self.func)
        return await trip(self, *args, **kwargs)

    def started(**_: Any) -> None:
        signalled.append(("started", threading.current_thread().name))

    def finished(**_: Any) -> None:
        signalled.append(("finished", threading.current_thread().name))

    async def run() -> list[int]:
        statuses = [await _get(handler, "/api/v1/openapi.json")]  # warms what is made once
        trips.clear()
        signalled.clear()
        statuses += [await _get(handler, "/api/v1/openapi.json") for _ in range(3)]
        return statuses

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    try:
        assert asyncio.run(run()) == [200] * 4
    finally:
        signals.request_started.disconnect(started)
        signals.request_finished.disconnect(finished)
    assert trips == []
    loop_thread = threading.current_thread().name  # asyncio.run's loop runs in this thread
    assert signalled == [("started", loop_thread), ("finished", loop_thread)] * 3
