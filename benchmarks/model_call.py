"""A worker's CPU per model call: the studio's OpenAI backend against a raw aiohttp client.

Every step a worker runs is one streamed chat completion through
``simulator.backends.OpenAIBackend``, on the worker's step loop (uvloop). This measures
what that costs the calling process above the wire itself: ``--calls`` streamed
completions, ``--concurrency`` at a time, against the protocol test server (a separate
process, no added latency), first with a raw aiohttp client that posts the same body and
reads the same lines without parsing them (the floor), then through the backend, in
alternating rounds. It prints the CPU microseconds of this process per call for each,
their ratio, and the backend's calls/s.

    .venv/bin/python benchmarks/model_call.py           # 3 rounds of 2,000 calls, 64 at a time
    .venv/bin/python benchmarks/model_call.py --quick   # 2 rounds of 500 calls
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp  # noqa: E402
import uvloop  # noqa: E402
from _cpu import cpu_per_call  # noqa: E402

from simulator.backends import ModelRequest, OpenAIBackend  # noqa: E402
from simulator.types import Sampling  # noqa: E402
from tests.integration.stack import model_server_process  # noqa: E402

REQUEST = ModelRequest(
    messages=(
        {"role": "system", "content": "You simulate a terminal."},
        {"role": "user", "content": "**Action:**\nmake"},
    ),
    sampling=Sampling(max_tokens=512),
)


async def measure(url: str, calls: int, at_once: int, rounds: int) -> dict[str, list[float]]:
    backend = OpenAIBackend(url, "world-studio-test", max_retries=0)
    body = json.dumps(backend.request_body(REQUEST)).encode()
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256))

    async def raw() -> None:
        async with session.post(
            f"{url}/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
        ) as response:
            async for _ in response.content:
                pass

    async def studio() -> None:
        async for _ in backend.stream(REQUEST):
            pass

    spent: dict[str, list[float]] = {"raw": [], "backend": []}
    try:
        await cpu_per_call(raw, at_once, at_once)  # warm both pools
        await cpu_per_call(studio, at_once, at_once)
        for _ in range(rounds):
            spent["raw"].append(await cpu_per_call(raw, calls, at_once))
            spent["backend"].append(await cpu_per_call(studio, calls, at_once))
    finally:
        await backend.aclose()
        await session.close()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds of 500 calls")
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    calls = args.calls or (500 if args.quick else 2000)
    rounds = 2 if args.quick else 3
    with model_server_process("--latency-ms", "0") as url:
        spent = uvloop.run(measure(url, calls, args.concurrency, rounds))
    raw_us = statistics.median(spent["raw"]) * 1e6
    backend_us = statistics.median(spent["backend"]) * 1e6
    print(f"model_call: {rounds} rounds of {calls} streamed calls, {args.concurrency} at a time")
    print(f"  raw aiohttp client (floor): {raw_us:7.0f} us CPU per call")
    print(f"  OpenAIBackend.stream:       {backend_us:7.0f} us CPU per call")
    print(f"  ratio backend / raw: {backend_us / raw_us:.2f}")


if __name__ == "__main__":
    main()
