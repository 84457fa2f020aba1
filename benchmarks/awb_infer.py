"""``awb infer`` throughput: concurrency 32 against one request at a time.

Starts the protocol test server (``python -m simulator.serve --latency-ms 100``)
as a subprocess, runs ``simulator.review.awb_eval`` inference (what ``manage.py awb
infer`` runs) over N synthetic rows at concurrency 1 and 32, and prints the
ratio. The acceptance bar is 25x on 300 rows.

    .venv/bin/python benchmarks/awb_infer.py            # 300 rows (~35 s)
    .venv/bin/python benchmarks/awb_infer.py --quick    # 64 rows
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simulator.chat_client import ChatClient  # noqa: E402
from simulator.review.awb_eval import infer_row, run_rows  # noqa: E402


def rows(n: int) -> list[dict[str, object]]:
    fixture = ROOT / "tests" / "fixtures" / "agentworldbench" / "synthetic_terminal.jsonl"
    base = [json.loads(line) for line in fixture.read_text().splitlines()]
    return [{**base[i % len(base)], "id": i // len(base)} for i in range(n)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def timed(data: list[dict[str, object]], url: str, concurrency: int) -> float:
    backend = ChatClient(url, "bench")
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        summary = await run_rows(
            data,
            lambda row: infer_row(backend, row),
            output=Path(folder) / "predictions.jsonl",
            concurrency=concurrency,
            progress=io.StringIO(),
        )
        elapsed = time.monotonic() - started
    await backend.aclose()
    empty = sum(1 for r in summary.rows if not r["gen"])
    if empty:
        raise SystemExit(
            f"{empty} of {len(data)} rows got no generation at concurrency {concurrency}"
        )
    return elapsed


async def server_check(url: str, concurrency: int) -> None:
    """Does the server overlap ``concurrency`` simultaneous requests? (wall time of a burst)."""
    body = {"model": "bench", "messages": [{"role": "user", "content": "ls"}], "max_tokens": 16}
    async with httpx.AsyncClient(base_url=url) as client:
        await client.post("/v1/chat/completions", json=body)
        for n in (1, concurrency):
            started = time.monotonic()
            await asyncio.gather(
                *(client.post("/v1/chat/completions", json=body) for _ in range(n))
            )
            print(
                f"server: {n} simultaneous request(s) answered in {time.monotonic() - started:.3f} s"
            )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=100)
    parser.add_argument("--quick", action="store_true", help="64 rows")
    args = parser.parse_args()
    n = 64 if args.quick else args.rows
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simulator.serve",
            "--port",
            str(port),
            "--latency-ms",
            str(args.latency_ms),
        ],
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url + "/health", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise SystemExit("the test server did not start") from None
                time.sleep(0.1)
        asyncio.run(server_check(url, args.concurrency))
        data = rows(n)
        serial = asyncio.run(timed(data, url, 1))
        cpu_started = time.process_time()
        parallel = asyncio.run(timed(data, url, args.concurrency))
        cpu = time.process_time() - cpu_started
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"rows: {n}, server latency: {args.latency_ms:.0f} ms")
    print(f"concurrency 1:  {serial:.2f} s ({n / serial:.1f} rows/s)")
    print(f"concurrency {args.concurrency}: {parallel:.2f} s ({n / parallel:.1f} rows/s)")
    print(f"client CPU per row (concurrency {args.concurrency}): {1000 * cpu / n:.1f} ms")
    print(f"speed-up: {serial / parallel:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
