"""The web process's CPU per API request in the handler itself: the studio's ``ApiHandler``
against the same handler with Django's ``ASGIHandler.handle`` (the baseline).

Django's ``handle`` sends ``request_started`` and closes the response through the
process's one sync thread, two thread trips per request; the studio's sends the signals
on the event loop (studio/api/handler.py). Both serve ``GET /api/v1/openapi.json`` (a
view with no database work, so the handler's share is what differs) in-process, over
ASGI messages, ``--requests`` at a time from one event loop, in alternating rounds. It
prints this process's CPU microseconds per request for each and their ratio.

    .venv/bin/python benchmarks/api_handler.py           # 5 rounds of 2,000 requests, 16 at a time
    .venv/bin/python benchmarks/api_handler.py --quick   # 3 rounds of 500
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _cpu import cpu_per_call  # noqa: E402
from _scratch import setup_scratch_studio  # noqa: E402

setup_scratch_studio("api-handler-bench-")

import uvloop  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402

from studio.api.handler import ApiHandler  # noqa: E402

PATH = "/api/v1/openapi.json"
SCOPE = {
    "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
    "scheme": "http", "path": PATH, "raw_path": PATH.encode(), "query_string": b"",
    "root_path": "", "headers": [(b"host", b"localhost")], "client": ("127.0.0.1", 5000),
    "server": ("localhost", 80),
}  # fmt: skip


class DjangoHandle(ApiHandler):
    """The studio's handler with Django's ``handle``: the state before the change."""

    handle = ASGIHandler.handle  # type: ignore[assignment]


async def request(handler: ApiHandler) -> int:
    sent: list[dict[str, Any]] = []
    incoming = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await asyncio.Future()  # no disconnect: the handler cancels this wait
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        sent.append(dict(message))

    await handler(dict(SCOPE), receive, send)
    return int(sent[0]["status"])


async def answered(handler: ApiHandler) -> None:
    if await request(handler) != 200:
        raise SystemExit(f"{PATH} did not answer 200")


async def measure(requests: int, at_once: int, rounds: int) -> dict[str, list[float]]:
    handlers = {"django": DjangoHandle(), "studio": ApiHandler()}
    spent: dict[str, list[float]] = {name: [] for name in handlers}
    for handler in handlers.values():  # warm: threads, URL resolver, the schema
        await cpu_per_call(partial(answered, handler), at_once, at_once)
    for _ in range(rounds):
        for name, handler in handlers.items():
            spent[name].append(await cpu_per_call(partial(answered, handler), requests, at_once))
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 500 requests")
    parser.add_argument("--requests", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    requests = args.requests or (500 if args.quick else 2000)
    rounds = 3 if args.quick else 5
    spent = uvloop.run(measure(requests, args.concurrency, rounds))
    us = {name: statistics.median(values) * 1e6 for name, values in spent.items()}
    print(f"api_handler: {rounds} rounds of {requests} requests to {PATH}, {args.concurrency} at a time")  # fmt: skip
    print(f"  Django's handle (two trips to the sync thread): {us['django']:6.0f} us CPU per request")  # fmt: skip
    print(f"  the studio's (signals on the event loop):       {us['studio']:6.0f} us CPU per request")  # fmt: skip
    print(f"  ratio Django / studio: {us['django'] / us['studio']:.2f}")


if __name__ == "__main__":
    main()
