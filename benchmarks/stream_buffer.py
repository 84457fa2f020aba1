"""The worker's CPU per stream-buffer append: the studio's Lua script against a MULTI/EXEC.

Each coalesced delta of a running step is appended to its stream buffer in Redis
(studio/lib/stream_buffer.py) before it is sent. The same append can be written as a
MULTI/EXEC pipeline of its six commands (the studio's earlier form) or as one Lua script
(today's); both are atomic. This runs both, ``--appends`` at a time each, in alternating
rounds, on one asyncio client (on uvloop, as a worker's step loop), with a bare ``APPEND`` of the same text as the floor, and
prints this process's CPU microseconds per append and the ratios.

    .venv/bin/python benchmarks/stream_buffer.py           # 5 rounds of 5,000 appends
    .venv/bin/python benchmarks/stream_buffer.py --quick   # 3 rounds of 1,000

Needs the shared Redis on 127.0.0.1:6379 (``make bench`` starts it); uses database 15.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis  # noqa: E402
import uvloop  # noqa: E402

from studio.lib.stream_buffer import APPEND_SCRIPT, TTL_S  # noqa: E402

URL = "redis://127.0.0.1:6379/15"
TEXT = "drwxr-xr-x 2 user user 4096 src\n"  # a coalesced delta's worth of text
KEYS = ["bench:stream:seq", "bench:stream:reasoning", "bench:stream:observation"]


async def cpu_per_append(append: Callable[[int], Awaitable[object]], appends: int) -> float:
    started = time.process_time()
    for seq in range(appends):
        await append(seq)
    return (time.process_time() - started) / appends


async def measure(appends: int, rounds: int) -> dict[str, list[float]]:
    client = aioredis.Redis.from_url(URL)
    script = client.register_script(APPEND_SCRIPT)

    async def floor(seq: int) -> object:
        return await client.append(KEYS[2], TEXT)

    async def pipeline(seq: int) -> object:
        async with client.pipeline(transaction=True) as pipe:
            pipe.append(KEYS[1], "")
            pipe.append(KEYS[2], TEXT)
            pipe.set(KEYS[0], seq)
            for key in KEYS:
                pipe.expire(key, TTL_S)
            return await pipe.execute()

    async def lua(seq: int) -> object:
        return await script(keys=KEYS, args=[seq, "", TEXT, TTL_S])

    ways = {"floor": floor, "pipeline": pipeline, "script": lua}
    spent: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for _ in range(rounds):
            for name, way in ways.items():
                await client.delete(*KEYS)
                spent[name].append(await cpu_per_append(way, appends))
    finally:
        await client.delete(*KEYS)
        await client.aclose()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 1,000 appends")
    parser.add_argument("--appends", type=int, default=None)
    args = parser.parse_args()
    appends = args.appends or (1000 if args.quick else 5000)
    rounds = 3 if args.quick else 5
    spent = uvloop.run(measure(appends, rounds))  # the worker's step loop is uvloop's
    us = {name: statistics.median(values) * 1e6 for name, values in spent.items()}
    print(f"stream_buffer: {rounds} rounds of {appends} appends, CPU us per append (median)")
    print(f"  bare APPEND (floor):         {us['floor']:6.1f}")
    print(f"  MULTI/EXEC of six commands:  {us['pipeline']:6.1f}  ({us['pipeline'] / us['floor']:.2f}x the floor)")  # fmt: skip
    print(f"  Lua script (the studio's):   {us['script']:6.1f}  ({us['script'] / us['floor']:.2f}x the floor)")  # fmt: skip
    print(f"  ratio pipeline / script: {us['pipeline'] / us['script']:.2f}")


if __name__ == "__main__":
    main()
