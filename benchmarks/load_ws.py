"""Many browsers stepping episodes at once over WebSockets, in production mode.

Starts a production-mode studio as deployed (uvicorn and Celery workers with DEBUG off,
on a Postgres cluster and a Redis server of its own, as scale.py does, so that their
CPU is the studio's alone) and the protocol test server with a fixed
first-token latency, then N WebSocket clients, each on its own episode, send an
action, wait for the step's final fragment, and send the next one, until the time
is up. It prints steps/s, step latency as a browser sees it, the latency the studio
adds (step latency minus the same request sent straight to the test server, measured
in this run), the step results that were lost or arrived twice (goal: 0 and 0), and
each process's CPU milliseconds per completed step (goal: the studio's ≤ 25 ms).

    .venv/bin/python benchmarks/load_ws.py               # 200 clients, 60 s
    .venv/bin/python benchmarks/load_ws.py --quick       # 20 clients, 10 s
    .venv/bin/python benchmarks/load_ws.py --clients 50 --seconds 30 --workers 3

Needs PostgreSQL's binaries and redis-server (`make services` installs them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale import private_services, production, studio_processes  # noqa: E402  (this folder)
from websockets.asyncio.client import connect  # noqa: E402

from tests.integration.stack import (  # noqa: E402
    Stack,
    model_server,
)

APPENDED = re.compile(r'beforeend:#timeline">\s*<li id="step-(\d+)"')
DELTA = re.compile(r'beforeend:#step-(\d+)-(?:observation|reasoning)"><span data-seq="(\d+)"')
DONE = re.compile(
    r'<li (?:hx-swap-oob="true" )?id="step-(\d+)" class="step (done|failed|cancelled)"'
)
SETUP = """
from django.contrib.auth import get_user_model
from studio.core.models import Membership, ModelEndpoint, Project
from studio.episodes.services import episode_create
from studio.worlds.services import world_create
u = get_user_model().objects.get(username="alice")
p = Project.objects.create(name="Load", slug="load")
Membership.objects.create(project=p, user=u, role="owner")
w = world_create(project=p, user=u, spec={{"domain": "terminal", "title": "Box",
    "premise": "A Debian box.", "initial_observation": "$ "}})
e = ModelEndpoint.objects.create(project=p, name="test-server", kind="openai",
    base_url={url!r}, model="world-studio-test", config={{"max_retries": 0, "timeout": 60}})
print(" ".join(str(episode_create(project=p, world_revision=w.head, endpoint=e).pk)
               for _ in range({n})))
"""


@dataclass
class Client:
    episode: int
    latencies: list[float] = field(default_factory=list)
    sent: int = 0
    results: dict[int, int] = field(default_factory=dict)  # step index -> final fragments seen
    appended: dict[int, int] = field(default_factory=dict)  # step index -> times added
    deltas: dict[tuple[int, int], int] = field(default_factory=dict)  # (index, seq) -> times
    failed: int = 0
    lost: int = 0

    def count(self, message: str) -> None:
        """Steps added to the timeline and streamed deltas: each must arrive exactly once."""
        for i in APPENDED.findall(message):
            self.appended[int(i)] = self.appended.get(int(i), 0) + 1
        for i, seq in DELTA.findall(message):
            key = (int(i), int(seq))
            self.deltas[key] = self.deltas.get(key, 0) + 1


async def run_client(stack: Stack, headers: dict[str, str], client: Client, until: float) -> None:
    url = f"{stack.ws_url}/ws/episodes/{client.episode}/"
    async with connect(url, additional_headers=headers, max_size=None) as ws:
        await asyncio.wait_for(ws.recv(), 30)  # the state on connect
        while time.monotonic() < until:
            index = client.sent + 1
            started = time.monotonic()
            await ws.send(json.dumps({"intent": "step", "action": f"echo {index}"}))
            client.sent += 1
            try:
                while True:
                    message = str(await asyncio.wait_for(ws.recv(), 60))
                    client.count(message)
                    finals = [(int(i), s) for i, s in DONE.findall(message)]
                    for i, status in finals:
                        client.results[i] = client.results.get(i, 0) + 1
                        if status != "done":
                            client.failed += 1
                    if any(i == index for i, _ in finals):
                        client.latencies.append(time.monotonic() - started)
                        break
            except TimeoutError:
                client.lost += 1
                return
        # Anything arriving late (a duplicate final fragment) is counted too.
        try:
            while True:
                message = str(await asyncio.wait_for(ws.recv(), 1.0))
                client.count(message)
                for i, _ in DONE.findall(message):
                    client.results[int(i)] = client.results.get(int(i), 0) + 1
        except TimeoutError:
            pass


def direct_latency(url: str, samples: int = 20) -> float:
    """The median time of the same kind of request sent straight to the test server."""
    body = {
        "model": "world-studio-test",
        "stream": True,
        "messages": [{"role": "system", "content": "terminal"}, {"role": "user", "content": "ls"}],
    }
    times = []
    with httpx.Client(timeout=30) as http:
        for _ in range(samples):
            started = time.monotonic()
            with http.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
                for _line in response.iter_lines():
                    pass
            times.append(time.monotonic() - started)
    return statistics.median(times)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def drive(
    stack: Stack, headers: dict[str, str], clients: list[Client], seconds: float
) -> list[BaseException]:
    until = time.monotonic() + seconds
    results = await asyncio.gather(
        *(run_client(stack, headers, c, until) for c in clients), return_exceptions=True
    )
    return [r for r in results if isinstance(r, BaseException)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 clients for 10 s")
    parser.add_argument("--clients", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="task threads per worker (default: the settings', 256)",
    )
    parser.add_argument("--latency-ms", type=float, default=100.0, help="test server latency")
    args = parser.parse_args()
    n = args.clients or (20 if args.quick else 200)
    seconds = args.seconds or (10.0 if args.quick else 60.0)

    with (
        model_server("--latency-ms", str(args.latency_ms)) as server,
        private_services() as services,
        production(services, {}, args.workers, args.concurrency) as stack,
    ):
        http = stack.login()
        ids = stack.shell(SETUP.format(url=server.url, n=n)).strip().splitlines()[-1].split()
        clients = [Client(int(pk)) for pk in ids]
        baseline = direct_latency(server.url)
        print(f"load_ws: {n} clients x {seconds:.0f} s, {args.workers} workers x "
              f"{args.concurrency or 256}, test server latency {args.latency_ms:.0f} ms")  # fmt: skip
        processes = studio_processes(stack, server.process.pid, services)
        cpu_before = processes.cpu()
        started = time.monotonic()
        errors = asyncio.run(drive(stack, stack.ws_headers(http), clients, seconds))
        elapsed = time.monotonic() - started
        cpu = {k: v - cpu_before[k] for k, v in processes.cpu().items()}
        db_steps = _db_counts(stack)

    latencies = [t for c in clients for t in c.latencies]
    sent = sum(c.sent for c in clients)
    # A step added to the timeline twice, or a streamed delta sent twice, is doubled on
    # the page. A final fragment re-rendered from the database is not: it replaces the
    # step by id (the consumer renders every step message from the current row).
    duplicated = sum(max(0, k - 1) for c in clients for k in c.appended.values()) + sum(
        max(0, k - 1) for c in clients for k in c.deltas.values()
    )
    rerenders = sum(max(0, k - 1) for c in clients for k in c.results.values())
    lost = sum(c.lost for c in clients) + sum(
        1 for c in clients for i in range(1, c.sent + 1) if i not in c.results
    )
    rows_mismatch = sum(1 for c in clients if db_steps.get(c.episode, 0) != c.sent)
    p50, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
    print(f"  steps completed        {len(latencies)} of {sent} sent in {elapsed:.1f} s")
    print(f"  throughput             {len(latencies) / elapsed:.1f} steps/s")
    print(f"  step latency           p50 {p50 * 1000:.0f} ms   p95 {p95 * 1000:.0f} ms")
    print(f"  test server alone      p50 {baseline * 1000:.0f} ms (same run)")
    print(f"  added by the studio    p50 {(p50 - baseline) * 1000:.0f} ms   "
          f"p95 {(p95 - baseline) * 1000:.0f} ms   (ratio p50 {p50 / baseline:.1f}x)")  # fmt: skip
    print(f"  failed steps           {sum(c.failed for c in clients)}")
    print(f"  lost results           {lost}")
    print(f"  duplicated results     {duplicated}")
    print(f"  final re-renders       {rerenders} (same step replaced by id: harmless)")
    print(f"  episodes whose step rows differ from what was sent: {rows_mismatch}")
    print_cpu(cpu, len(latencies))
    for error in errors[:5]:
        print(f"  client error: {type(error).__name__}: {error}")
    return 0 if lost == duplicated == rows_mismatch == 0 and not errors else 1


def print_cpu(cpu: dict[str, float], steps: int) -> None:
    """CPU ms per completed step by process: the studio's own, then the rest."""
    if not steps:
        return
    listed = sum(v for k, v in cpu.items() if k != "(whole machine)")
    studio = sum(v for k, v in cpu.items() if not k.startswith("("))
    print(f"  CPU ms per step        studio {1000 * studio / steps:.1f} (all but the bracketed)")
    for kind, seconds in cpu.items():
        if kind != "(whole machine)":
            print(f"    {kind:<22} {1000 * seconds / steps:.1f}")
    other = cpu["(whole machine)"] - listed
    print(f"    {'(everything else)':<22} {1000 * other / steps:.1f}")


def _db_counts(stack: Stack) -> dict[int, int]:
    out = stack.shell(
        "import json; from django.db.models import Count; "
        "from studio.episodes.models import Step; "
        "print(json.dumps({r['episode_id']: r['n'] for r in "
        "Step.objects.values('episode_id').annotate(n=Count('id'))}))"
    )
    return {int(k): v for k, v in json.loads(out.strip().splitlines()[-1]).items()}


if __name__ == "__main__":
    sys.exit(main())
