"""P2: environment-API throughput against a raw client, on the same test server.

Starts the protocol test server (50 ms before the first token), then measures

* raw: 64 concurrent coroutines posting chat completions straight to the server
  with one pooled httpx.AsyncClient (the ceiling: no studio at all);
* studio: 64 concurrent API episodes driven by ``simulator.client.AsyncStudioClient``
  against a live studio (each step: validate, store, run the task, stream from the
  server, parse, verify, save, answer), starting a new episode when one ends.

and prints ``P2 = studio steps/s ÷ raw requests/s``. The studio runs in embedded
mode (uvicorn + SQLite + in-process tasks), which is what fits 2 CPU cores shared
with other work; production mode would add Celery workers and Postgres.

    .venv/bin/python benchmarks/env_api.py [--quick] [--concurrency 64] [--seconds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from simulator.client import AsyncStudioClient  # noqa: E402
from simulator.http_transport import AiohttpTransport  # noqa: E402
from simulator.serve import ServerOptions, start_server_in_thread  # noqa: E402
from tests.integration.stack import embedded_studio  # noqa: E402

SETUP = """
import json
from tests.integration.api.factories import make_project, make_scenario, make_user
from studio.api.services import token_create
user = make_user("bench")
scenario = make_scenario(make_project(user, slug="bench"), max_steps=1000, success=[])
_, clear = token_create(user=user, name="bench")
print(json.dumps({"scenario": scenario.pk, "token": clear}))
"""


async def raw_throughput(base_url: str, concurrency: int, seconds: float) -> float:
    body = {
        "model": "world-studio-test",
        "messages": [
            {"role": "system", "content": "You simulate a terminal."},
            {"role": "user", "content": "make"},
        ],
        "max_tokens": 512,
    }
    done = 0
    transport = AiohttpTransport(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, transport=transport, timeout=60) as client:
        deadline = time.monotonic() + seconds

        async def worker() -> None:
            nonlocal done
            while time.monotonic() < deadline:
                response = await client.post("/v1/chat/completions", json=body)
                response.raise_for_status()
                done += 1

        started = time.monotonic()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return done / (time.monotonic() - started)


async def studio_throughput(
    base_url: str, token: str, scenario: int, concurrency: int, seconds: float
) -> float:
    steps = 0
    async with AsyncStudioClient(base_url, token, max_connections=concurrency) as client:
        deadline = time.monotonic() + seconds

        async def episode_runner(seed: int) -> None:
            nonlocal steps
            env_id, _, _ = await client.create(scenario, seed=seed)
            n = 0
            while time.monotonic() < deadline:
                n += 1
                _, _, terminated, truncated, _ = await client.step(env_id, f"make target{n}")
                steps += 1
                if terminated or truncated:
                    env_id, _, _ = await client.create(scenario, seed=seed)
            await client.close(env_id)

        started = time.monotonic()
        await asyncio.gather(*(episode_runner(i) for i in range(concurrency)))
        return steps / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a few seconds per side")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    seconds = 4.0 if args.quick else args.seconds

    with start_server_in_thread(ServerOptions(latency_ms=50)) as model:
        raw = asyncio.run(raw_throughput(model.base_url, args.concurrency, seconds))
        env = {
            "STUDIO_MODEL_URL": model.base_url,
            "STUDIO_MODEL_NAME": "world-studio-test",
            "STUDIO_API_RATE_PER_S": "100000",
            "STUDIO_API_RATE_BURST": "100000",
        }
        with embedded_studio(extra_env=env) as stack:
            data = json.loads(stack.shell(SETUP).strip().splitlines()[-1])
            studio = asyncio.run(
                studio_throughput(
                    stack.base_url, data["token"], data["scenario"], args.concurrency, seconds
                )
            )
    print(f"raw async client: {raw:.1f} requests/s ({args.concurrency} concurrent, 50 ms latency)")
    print(f"studio env API (embedded mode): {studio:.1f} steps/s ({args.concurrency} episodes)")
    print(f"P2 = {studio / raw:.3f}")


if __name__ == "__main__":
    main()
