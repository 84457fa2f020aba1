"""Scale: throughput, failures, CPU per step and memory per session at high concurrency.

The "before" baseline for the scale work (the studio's own CPU per step near zero, the
env API holding 2,048 concurrent sessions). For each mode

* production: uvicorn + 2 Celery workers (as deployed: 256 threads each, the model calls
  on each worker's step loop; ``--pool prefork --concurrency 4`` gives the old shape) +
  Postgres + Redis, started
  as tests/integration/stack.py starts them, except that Postgres and Redis are private
  instances on free ports (a throw-away ``initdb`` cluster with max_connections=100, as
  the shared one has, and a ``redis-server --save ""``): their CPU is then the studio's
  alone, and the studio running out of connections cannot break other people's tests;
* embedded: uvicorn + SQLite + in-process tasks (``make run``);

and each concurrency N (64, 256 and 2,048; 64 and 256 with --quick; 1, 2, 4, ..., 2,048
with --sweep, which also writes the rows to a JSON file for benchmarks/plot_sweep.py), it
measures, against the protocol test server (``python -m simulator.serve --latency-ms 50``,
a separate process):

1. raw: N coroutines posting chat completions straight to the test server with one pooled
   client (the ceiling), then studio: N sessions through ``AsyncStudioClient``, each
   ``create`` (reset) once, then ``step`` in a loop (resetting again while it has no
   session; 0.5 s pause after any failed call). P2 = studio steps/s ÷ raw requests/s,
   both measured in this run, steps counted when they complete inside the window.
2. calls that failed, by kind (HTTP status and error code, timeout, connection error),
   for resets and steps, with the server-side errors found in the studio's logs (Postgres
   "too many clients", HTTP 500s, Celery tasks that raised). Steps started in the window
   count for the success rate when they end (ok or not) within a grace period after it
   (``--grace``: 10 s, or the timeout if shorter; with --sweep the timeout and a little
   more, so that every call started in the window ends, ok or timed out); the rest are
   reported as cut.
3. latency per call: the wall time of each raw request (post and status check) and of
   each studio ``step`` call (submit and wait, the client's retries of a 503 included),
   for the calls that succeeded and were started inside the window (so the studio's late
   steps count, failed calls do not). p50 and p95 are nearest-rank percentiles. The
   *added* latency at a size is the studio's percentile minus the raw one at the same N,
   from the same run: p50 added = studio step p50 - raw request p50, p95 added = studio
   step p95 - raw request p95; what the studio adds to a model call as a caller sees it.
   Calls cut at the window's end or timed out have no latency, so where a phase has such
   calls its percentiles are lower bounds.
4. CPU milliseconds per completed step of each studio process during the measured
   window: user+system time from /proc (through psutil) before and after, for the web
   process, each Celery worker (main process + pool children), Redis, and Postgres
   (client backends, and the postmaster with its helper processes). Time of processes
   that exit during the window is counted through their parent's reaped-children times.
   Also shown: the test server's and this driver's CPU, and the whole machine's, so that
   what other work on the box took is visible.
5. memory per idle session: RSS growth of the web and worker processes (with children)
   while the N sessions are opened (64 resets in flight at a time, for at most 60 s, or
   30 s with --quick) and before any step, divided by the sessions opened (meaningful at
   the large N of a full run; small N are noise).

Nothing here asserts on time: it prints numbers. The load average is printed with each
measurement; run it on a quiet machine for numbers to compare.

    .venv/bin/python benchmarks/scale.py --quick   # 64 and 256, 5 s windows (~2-3 min)
    .venv/bin/python benchmarks/scale.py           # 64, 256 and 2048, 20 s windows
    .venv/bin/python benchmarks/scale.py --modes production --sizes 2048 --seconds 30
    .venv/bin/python benchmarks/scale.py --sweep   # 1 .. 2048, 10 s windows, rows to JSON
    .venv/bin/python benchmarks/scale.py --sweep --sizes 1 4 16 --seconds 3 --json /tmp/s.json

Needs ``redis-server`` and PostgreSQL's ``initdb``/``postgres`` binaries (run as the
``postgres`` user when this runs as root).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import psutil  # type: ignore[import-untyped]  # noqa: E402  (installed with accelerate)
import psycopg  # noqa: E402
from _cpu import tree_cpu  # noqa: E402  (this folder)

from simulator.client import AsyncStudioClient, StudioAPIError  # noqa: E402
from simulator.http_transport import AiohttpTransport  # noqa: E402
from tests.integration.stack import (  # noqa: E402
    ROOT,
    Stack,
    _base_env,
    embedded_studio,
    free_port,
    model_server,
    wait_until,
)

LATENCY_MS = 50
# --sweep: every power of two up to the 2,048-session goal, shorter windows than a full run
# (12 sizes per mode) and a per-call timeout long enough for 2,048 queued steps.
SWEEP_SIZES = [2**k for k in range(12)]
SWEEP_SECONDS = 10.0
SWEEP_TIMEOUT = 120.0
SWEEP_JSON = ROOT / "var" / "scale-sweep.json"
RAMP_CONCURRENCY = 64  # sessions being opened at once before a window
BACKOFF_S = 0.5  # after a failed call, before the next one (a trainer would back off too)
SETUP = """
import json
from tests.integration.api.factories import make_project, make_scenario, make_user
from studio.api.services import token_create
user = make_user("bench")
scenario = make_scenario(make_project(user, slug="bench"), max_steps=100000, success=[])
_, clear = token_create(user=user, name="bench")
print(json.dumps({"scenario": scenario.pk, "token": clear}))
"""
RAW_BODY = {
    "model": "world-studio-test",
    "messages": [
        {"role": "system", "content": "You simulate a terminal."},
        {"role": "user", "content": "make"},
    ],
    "max_tokens": 512,
}


# ---------------------------------------------------------------- private services


def _pg_bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not candidates:
        raise SystemExit(f"scale.py needs PostgreSQL's {name}")
    return str(candidates[-1])


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@dataclass
class Services:
    pg_port: int
    pg_pid: int
    redis_port: int
    redis_pid: int


@contextlib.contextmanager
def private_services(max_connections: int = 100) -> Iterator[Services]:
    """A throw-away Postgres cluster and Redis server on free ports, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="scale-services-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    data = root / "pg"
    pg_port, redis_port = free_port(), free_port()
    redis = subprocess.Popen(
        ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--maxclients", "10000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    postgres: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(
            _as_postgres([_pg_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
            check=True, capture_output=True,
        )  # fmt: skip
        postgres = subprocess.Popen(
            _as_postgres([_pg_bin("postgres"), "-D", str(data), "-p", str(pg_port),
                          "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={root}",
                          "-c", f"max_connections={max_connections}"]),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        url = f"postgresql://postgres@127.0.0.1:{pg_port}/postgres"

        def pg_up() -> bool:
            try:
                psycopg.connect(url, connect_timeout=1).close()
                return True
            except psycopg.Error:
                return False

        wait_until(pg_up, 30, f"private postgres on {pg_port}")
        pid = int((data / "postmaster.pid").read_text().split()[0])
        wait_until(lambda: _redis_up(redis_port), 30, f"private redis on {redis_port}")
        yield Services(pg_port, pid, redis_port, redis.pid)
    finally:
        if postgres is not None:
            subprocess.run(
                _as_postgres([_pg_bin("pg_ctl"), "stop", "-D", str(data), "-m", "immediate"]),
                check=False, capture_output=True,
            )  # fmt: skip
            with contextlib.suppress(subprocess.TimeoutExpired):
                postgres.wait(timeout=20)
        redis.terminate()
        redis.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def _redis_up(port: int) -> bool:
    out = subprocess.run(
        ["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True, check=False
    )
    return out.stdout.strip() == "PONG"


@contextlib.contextmanager
def production(
    services: Services, extra_env: dict[str, str], workers: int, concurrency: int | None
) -> Iterator[Stack]:
    """tests/integration/stack.py's production stack, on the private Postgres and Redis."""
    url = f"postgresql://postgres@127.0.0.1:{services.pg_port}"
    with psycopg.connect(f"{url}/postgres", autocommit=True) as conn:
        conn.execute('CREATE DATABASE "studio"')
    var_dir = Path(tempfile.mkdtemp(prefix="scale-production-"))
    env = _base_env(var_dir)
    env.update(
        {
            "STUDIO_REDIS_URL": f"redis://127.0.0.1:{services.redis_port}/0",
            "STUDIO_DATABASE_URL": f"postgres://postgres@127.0.0.1:{services.pg_port}/studio",
            "STUDIO_SECRET_KEY": uuid.uuid4().hex * 2,
            # As deploy/.env.example runs it: DEBUG off (Django's debug cursor records
            # every query), and plain HTTP, since no proxy terminates TLS here.
            "STUDIO_DEBUG": "false",
            "STUDIO_SSL_REDIRECT": "false",
            "STUDIO_SECURE_COOKIES": "false",
            **extra_env,
        }
    )
    stack = Stack(env=env, var_dir=var_dir, database="")  # the cluster goes away whole
    try:
        stack.manage("migrate", "--noinput", "-v", "0")
        for index in range(workers):
            stack.start_worker(f"w{index + 1}", concurrency=concurrency)
        stack.start_web()
        yield stack
    finally:
        stack.close()
        shutil.rmtree(var_dir, ignore_errors=True)


# ---------------------------------------------------------------- CPU and memory


def _postgres_cpu(postmaster: int) -> dict[str, float]:
    """Client backends (live ones, and those that exited: the postmaster's reaped
    children) and the rest (postmaster, checkpointer, WAL writer, ...)."""
    backends = other = 0.0
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(postmaster)
        t = root.cpu_times()
        backends += t.children_user + t.children_system
        other += t.user + t.system
        for proc in root.children():
            with contextlib.suppress(psutil.Error):
                t = proc.cpu_times()
                cpu = t.user + t.system + t.children_user + t.children_system
                if "studio" in " ".join(proc.cmdline()):
                    backends += cpu
                else:
                    other += cpu
    return {"postgres backends": backends, "postgres other": other}


def _rss(pid: int) -> int:
    try:
        root = psutil.Process(pid)
        return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
    except psutil.Error:
        return 0


@dataclass
class Processes:
    """The studio's processes by kind, plus the test server and this driver."""

    studio: dict[str, int]  # kind -> root pid
    postmaster: int | None
    server: int

    def cpu(self) -> dict[str, float]:
        out = {kind: tree_cpu(pid) for kind, pid in self.studio.items()}
        if self.postmaster is not None:
            out.update(_postgres_cpu(self.postmaster))
        t = psutil.Process().cpu_times()
        out["(test server)"] = tree_cpu(self.server)
        out["(this driver)"] = t.user + t.system
        machine = psutil.cpu_times()
        out["(whole machine)"] = (
            machine.user
            + machine.system
            + machine.nice
            + getattr(machine, "irq", 0.0)
            + getattr(machine, "softirq", 0.0)
        )
        return out

    def backends(self) -> int:
        """Postgres client backends connected to the studio's database now."""
        if self.postmaster is None:
            return 0
        with contextlib.suppress(psutil.Error):
            return sum(
                "studio" in " ".join(p.cmdline())
                for p in psutil.Process(self.postmaster).children()
            )
        return 0

    def rss(self) -> int:
        return sum(
            _rss(pid) for kind, pid in self.studio.items() if kind.startswith(("web", "celery"))
        )


def studio_processes(stack: Stack, server: int, services: Services | None) -> Processes:
    assert stack.web is not None
    studio = {"web (uvicorn)": stack.web.pid}
    for name, worker in stack.workers.items():
        studio[f"celery {name}"] = worker.pid
    if services is not None:
        studio["redis"] = services.redis_pid
    return Processes(studio, services.pg_pid if services else None, server)


# ---------------------------------------------------------------- load


def error_kind(exc: BaseException) -> str:
    if isinstance(exc, StudioAPIError):
        return f"HTTP {exc.status} {exc.code}"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return "timeout"
    return type(exc).__name__


@dataclass
class Phase:
    n: int
    seconds: float
    done: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    resets_ok: int = 0
    reset_errors: Counter[str] = field(default_factory=Counter)
    late: int = 0  # steps started in the window that completed after it
    cut: int = 0  # in flight when the window ended (after a grace period)
    opened: int = 0  # sessions opened before the window
    logged: Counter[str] = field(default_factory=Counter)  # server-side errors in the logs
    ramp_s: float = 0.0
    idle_rss: int = 0  # bytes grown while the sessions were opened
    cpu: dict[str, float] = field(default_factory=dict)
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    window_s: float = 0.0  # between the CPU snapshots
    backends: int = 0  # Postgres client backends at the window's end
    latencies: list[float] = field(default_factory=list)  # seconds, successful calls

    @property
    def rate(self) -> float:
        return self.done / self.seconds

    @property
    def unfinished(self) -> int:
        """Calls whose latency is unknown (cut or timed out): percentiles are lower bounds."""
        return self.cut + self.errors["timeout"]

    def percentile_ms(self, q: float) -> float | None:
        """Nearest-rank percentile of the calls' latencies, in ms; None with no call."""
        if not self.latencies:
            return None
        ordered = sorted(self.latencies)
        return 1000 * ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


async def _finish(tasks: list[asyncio.Task[None]], grace: float) -> int:
    """Give in-flight calls ``grace`` seconds, then cancel them; how many were cut."""
    _, pending = await asyncio.wait(tasks, timeout=grace)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return len(pending)


async def raw_phase(base_url: str, n: int, seconds: float, timeout: float) -> Phase:
    phase = Phase(n, seconds)
    transport = AiohttpTransport(max_connections=n)
    async with httpx.AsyncClient(base_url=base_url, transport=transport, timeout=timeout) as client:
        deadline = time.monotonic() + seconds

        async def worker() -> None:
            while time.monotonic() < deadline:
                sent = time.monotonic()
                try:
                    response = await asyncio.wait_for(
                        client.post("/v1/chat/completions", json=RAW_BODY), timeout
                    )
                    response.raise_for_status()
                except Exception as exc:  # counted, then the loop goes on
                    phase.errors[error_kind(exc)] += 1
                    await asyncio.sleep(BACKOFF_S)
                    continue
                answered = time.monotonic()
                phase.latencies.append(answered - sent)
                if answered <= deadline:
                    phase.done += 1

        tasks = [asyncio.ensure_future(worker()) for _ in range(n)]
        await asyncio.sleep(seconds)
        phase.cut = await _finish(tasks, min(timeout, 5.0))
    phase.load = os.getloadavg()
    return phase


async def studio_phase(
    base_url: str,
    token: str,
    scenario: int,
    n: int,
    seconds: float,
    timeout: float,
    grace: float,
    procs: Processes,
    ramp_cap: float = 60.0,
) -> Phase:
    phase = Phase(n, seconds)
    async with AsyncStudioClient(
        base_url, token, max_connections=n, timeout=timeout, max_rate_limit_retries=1
    ) as client:
        env_ids: list[int | None] = [None] * n

        async def reset(i: int) -> None:
            try:
                env_ids[i], _, _ = await asyncio.wait_for(client.create(scenario, seed=i), timeout)
                phase.resets_ok += 1
            except Exception as exc:
                phase.reset_errors[error_kind(exc)] += 1
                await asyncio.sleep(BACKOFF_S)

        # Open the N sessions, RAMP_CONCURRENCY at a time (nothing stepped yet): the idle
        # memory they take. Sessions not open by the ramp's end reset in the loop below.
        gate = asyncio.Semaphore(RAMP_CONCURRENCY)
        rss_before = procs.rss()
        started = time.monotonic()
        ramp_end = started + ramp_cap

        async def open_one(i: int) -> None:
            async with gate:
                if time.monotonic() < ramp_end:
                    await reset(i)

        await asyncio.gather(*(open_one(i) for i in range(n)))
        phase.ramp_s = time.monotonic() - started
        phase.idle_rss = procs.rss() - rss_before
        phase.opened = phase.resets_ok

        cpu_before = procs.cpu()
        window_started = time.monotonic()
        deadline = window_started + seconds

        async def session(i: int) -> None:
            step = 0
            while time.monotonic() < deadline:
                env_id = env_ids[i]
                if env_id is None:
                    await reset(i)
                    continue
                step += 1
                sent = time.monotonic()
                try:
                    await asyncio.wait_for(client.step(env_id, f"make target{step}"), timeout)
                except Exception as exc:
                    phase.errors[error_kind(exc)] += 1
                    if isinstance(exc, StudioAPIError) and exc.status in (404, 410):
                        env_ids[i] = None
                    await asyncio.sleep(BACKOFF_S)
                    continue
                answered = time.monotonic()
                phase.latencies.append(answered - sent)
                if answered <= deadline:
                    phase.done += 1
                else:
                    phase.late += 1

        tasks = [asyncio.ensure_future(session(i)) for i in range(n)]
        await asyncio.sleep(seconds)
        cpu_after = procs.cpu()
        phase.backends = procs.backends()
        phase.window_s = time.monotonic() - window_started
        phase.load = os.getloadavg()
        phase.cpu = {kind: cpu_after[kind] - cpu_before.get(kind, 0.0) for kind in cpu_after}
        phase.cut = await _finish(tasks, grace)
        # Close what was opened (bounded; not measured).
        closing = [
            asyncio.ensure_future(asyncio.wait_for(client.close(e), timeout))
            for e in env_ids
            if e is not None
        ]
        if closing:
            await asyncio.wait(closing, timeout=10.0)
            for task in closing:
                task.cancel()
            await asyncio.gather(*closing, return_exceptions=True)
    return phase


LOGGED = {
    "too many clients": "Postgres: too many clients",
    "Internal Server Error": "HTTP 500 logged",
    "raised unexpected": "Celery task raised",
}


def scan_logs(var_dir: Path, seen: dict[str, int]) -> Counter[str]:
    """Server-side errors in the stack's logs since the last scan (``seen``: offsets)."""
    found: Counter[str] = Counter()
    for path in sorted(var_dir.glob("*.log")):
        with path.open("rb") as log:
            log.seek(seen.get(path.name, 0))
            text = log.read().decode(errors="replace")
            seen[path.name] = log.tell()
        for needle, label in LOGGED.items():
            if text.count(needle):
                found[label] += text.count(needle)
    return found


# ---------------------------------------------------------------- report


@dataclass
class Row:
    mode: str
    raw: Phase
    studio: Phase

    def added_ms(self, q: float) -> float | None:
        """Studio step percentile minus raw request percentile at this N (module doc, 3)."""
        studio, raw = self.studio.percentile_ms(q), self.raw.percentile_ms(q)
        return None if studio is None or raw is None else studio - raw

    def as_json(self) -> dict[str, object]:
        """One flat record per mode and size: what benchmarks/plot_sweep.py reads."""
        s, raw = self.studio, self.raw
        own = sum(v for k, v in s.cpu.items() if not k.startswith("("))
        return {
            "mode": self.mode,
            "n": s.n,
            "seconds": s.seconds,
            "raw_req_per_s": raw.rate,
            "studio_steps_per_s": s.rate,
            "p2": s.rate / raw.rate if raw.rate else None,
            "raw_p50_ms": raw.percentile_ms(50),
            "raw_p95_ms": raw.percentile_ms(95),
            "studio_p50_ms": s.percentile_ms(50),
            "studio_p95_ms": s.percentile_ms(95),
            "added_p50_ms": self.added_ms(50),
            "added_p95_ms": self.added_ms(95),
            "raw_calls_ok": len(raw.latencies),
            "raw_failed": sum(raw.errors.values()),
            "raw_cut": raw.cut,
            "raw_unfinished": raw.unfinished,
            "studio_steps_ok": len(s.latencies),
            "studio_failed_steps": sum(s.errors.values()),
            "studio_failed_resets": sum(s.reset_errors.values()),
            "studio_errors": dict(s.errors),
            "studio_reset_errors": dict(s.reset_errors),
            "studio_cut": s.cut,
            "studio_unfinished": s.unfinished,
            "studio_cpu_ms_per_step": 1000 * own / s.done if s.done else None,
            "outside_cpu_ms_per_step": outside_ms_per_step(s),
            "load_1m": s.load[0],
        }


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _errors(counter: Counter[str]) -> str:
    return ", ".join(f"{k} x{v}" for k, v in counter.most_common()) or "-"


def report(rows: list[Row], cores: int) -> None:
    print()
    print(f"{'mode':<11}{'N':>6}{'raw req/s':>11}{'studio steps/s':>16}{'P2':>8}"
          f"{'step ok %':>11}{'reset ok %':>12}{'load 1m':>9}")  # fmt: skip
    for row in rows:
        s = row.studio
        attempted = s.done + s.late + sum(s.errors.values())
        resets = s.resets_ok + sum(s.reset_errors.values())
        ok = 100.0 * (s.done + s.late) / attempted if attempted else float("nan")
        reset_ok = 100.0 * s.resets_ok / resets if resets else float("nan")
        print(f"{row.mode:<11}{s.n:>6}{row.raw.rate:>11.1f}{s.rate:>16.1f}"
              f"{s.rate / row.raw.rate if row.raw.rate else float('nan'):>8.3f}"
              f"{ok:>11.1f}{reset_ok:>12.1f}{s.load[0]:>9.2f}")  # fmt: skip
    print()
    print("latency per call, ms (successful calls started in the window; added = studio - raw"
          " at the same N; '>': calls cut or timed out, a lower bound):")  # fmt: skip
    print(f"{'mode':<11}{'N':>6}{'raw p50':>10}{'raw p95':>10}{'step p50':>10}{'step p95':>10}"
          f"{'added p50':>11}{'added p95':>11}")  # fmt: skip
    for row in rows:
        raw_mark = ">" if row.raw.unfinished else ""
        step_mark = ">" if row.studio.unfinished else ""  # and so the added latency's too
        latency_cells = [
            (raw_mark, row.raw.percentile_ms(50), 10),
            (raw_mark, row.raw.percentile_ms(95), 10),
            (step_mark, row.studio.percentile_ms(50), 10),
            (step_mark, row.studio.percentile_ms(95), 10),
            (step_mark, row.added_ms(50), 11),
            (step_mark, row.added_ms(95), 11),
        ]
        text = "".join(f"{(mark if value is not None else '') + _ms(value):>{width}}"
                       for mark, value, width in latency_cells)  # fmt: skip
        print(f"{row.mode:<11}{row.studio.n:>6}{text}")
    print()
    print("failed calls by kind (studio; raw in brackets), calls cut at the window's end:")
    for row in rows:
        s = row.studio
        print(f"  {row.mode:<11}{s.n:>5}: steps: {_errors(s.errors)}; resets: "
              f"{_errors(s.reset_errors)}; cut {s.cut}  [raw: {_errors(row.raw.errors)}]")  # fmt: skip
        if s.logged:
            print(f"  {'':<11}{'':>5}  in the studio's logs: {_errors(s.logged)}")
        if s.backends:
            print(f"  {'':<11}{'':>5}  Postgres client backends at the window's end: {s.backends}")
    print()
    print("CPU ms per completed step, by process (during the studio window):")
    kinds: list[str] = []
    for row in rows:
        kinds += [k for k in row.studio.cpu if k not in kinds]
    header = "".join(f"{f'{r.mode[:4]} {r.studio.n}':>12}" for r in rows)
    print(f"  {'process':<22}{header}")
    for kind in kinds:
        cells = []
        for row in rows:
            s = row.studio
            if kind not in s.cpu or not s.done:
                cells.append(f"{'-':>12}")
            else:
                cells.append(f"{1000 * s.cpu[kind] / s.done:>12.1f}")
        print(f"  {kind:<22}{''.join(cells)}")
    studio_cells = []
    other_cells = []
    busy_cells = []
    cores_cells = []
    for row in rows:
        s = row.studio
        own = sum(v for k, v in s.cpu.items() if not k.startswith("("))
        others = s.cpu.get("(whole machine)", 0.0) - sum(
            v for k, v in s.cpu.items() if k != "(whole machine)"
        )
        studio_cells.append(f"{1000 * own / s.done:>12.1f}" if s.done else f"{'-':>12}")
        other_cells.append(f"{1000 * others / s.done:>12.1f}" if s.done else f"{'-':>12}")
        window = s.window_s or s.seconds
        busy = s.cpu.get("(whole machine)", 0.0) / (window * cores)
        busy_cells.append(f"{100 * busy:>11.0f}%")
        cores_cells.append(f"{own / window:>12.2f}")
    print(f"  {'= studio total':<22}{''.join(studio_cells)}")
    print(f"  {'(everything else)':<22}{''.join(other_cells)}")
    print(f"  {'studio CPU, cores':<22}{''.join(cores_cells)}")
    print(f"  {f'machine busy ({cores} cores)':<22}{''.join(busy_cells)}")
    print()
    box_limit(rows, cores)
    print()
    print("memory per idle session (RSS growth of web + workers while opening N, / N):")
    for row in rows:
        s = row.studio
        per = f"{s.idle_rss / s.opened / 1024:8.1f} KiB/session" if s.opened else "     n/a"
        print(f"  {row.mode:<11}{s.n:>5}: {per} "
              f"({s.idle_rss / 2**20:+.1f} MiB for {s.opened} opened in {s.ramp_s:.1f} s)")  # fmt: skip


def outside_ms_per_step(phase: Phase) -> float | None:
    """CPU ms per completed step that is not the studio's: the test server and this
    driver, which share the box with it (a deployment has them elsewhere)."""
    if not phase.done:
        return None
    outside = phase.cpu.get("(test server)", 0.0) + phase.cpu.get("(this driver)", 0.0)
    return 1000 * outside / phase.done


#: Issue 15's P2 target for each mode.
TARGET_P2 = {"production": 0.5, "embedded": 0.2}


def box_limit(rows: list[Row], cores: int) -> None:
    """The physical limit: what a studio costing no CPU at all could reach on this box,
    and the studio's CPU per step in units of the test server's and the driver's (which
    do the same work every day: a ratio to compare across machines of different speed),
    and the CPU a step may cost the studio for the mode's target P2: all of the cores'
    time, less the test server's and the driver's per step. An embedded studio is one
    process, so the GIL also caps it at one core's time. A budget at or below 0 means no
    studio, however cheap, reaches that P2 with the server and the driver on these cores."""
    print("the box's limit, its CPU alone (the test server and this driver share its cores"
          " with the studio):")  # fmt: skip
    print(f"  {'mode':<11}{'N':>5}{'outside ms/step':>17}{'studio / outside':>18}"
          f"{'ceiling steps/s':>17}{'P2 ceiling':>12}{'target P2':>11}"
          f"{'studio ms/step for it':>23}")  # fmt: skip
    for row in rows:
        outside = outside_ms_per_step(row.studio)
        if outside is None or not outside or not row.raw.rate:
            continue
        own = sum(v for k, v in row.studio.cpu.items() if not k.startswith("("))
        relative = 1000 * own / row.studio.done / outside
        ceiling = cores * 1000 / outside
        target = TARGET_P2[row.mode]
        budget = cores * 1000 / (target * row.raw.rate) - outside
        if row.mode == "embedded":
            budget = min(budget, 1000 / (target * row.raw.rate))
        print(f"  {row.mode:<11}{row.studio.n:>5}{outside:>17.1f}{relative:>18.1f}"
              f"{ceiling:>17.0f}{ceiling / row.raw.rate:>12.2f}{target:>11.1f}"
              f"{budget:>23.2f}")  # fmt: skip


# ---------------------------------------------------------------- main


def measure(
    mode: str,
    stack: Stack,
    model_url: str,
    procs: Processes,
    sizes: list[int],
    seconds: float,
    timeout: float,
    grace: float,
    ramp_cap: float,
    record: Callable[[Row], None],
) -> None:
    """Measure each size in turn; ``record`` gets each row as soon as it is measured."""
    data = json.loads(stack.shell(SETUP).strip().splitlines()[-1])
    # Warm-up: a few sessions and steps, so that imports and first connections are not
    # counted as the first size's memory or CPU.
    asyncio.run(
        studio_phase(stack.base_url, data["token"], data["scenario"], 4, 2.0, timeout, grace, procs)
    )
    seen: dict[str, int] = {}
    scan_logs(stack.var_dir, seen)
    for n in sizes:
        raw = asyncio.run(raw_phase(model_url, n, seconds, timeout))
        print(f"  {mode} N={n}: raw {raw.rate:.1f} req/s, p50 {_ms(raw.percentile_ms(50))} ms "
              f"p95 {_ms(raw.percentile_ms(95))} ms (load {raw.load[0]:.2f})", flush=True)  # fmt: skip
        studio = asyncio.run(
            studio_phase(
                stack.base_url,
                data["token"],
                data["scenario"],
                n,
                seconds,
                timeout,
                grace,
                procs,
                ramp_cap,
            )
        )
        print(f"  {mode} N={n}: studio {studio.rate:.1f} steps/s, p50 "
              f"{_ms(studio.percentile_ms(50))} ms p95 {_ms(studio.percentile_ms(95))} ms, "
              f"{sum(studio.errors.values())} failed steps, "
              f"{sum(studio.reset_errors.values())} failed resets "
              f"(load {studio.load[0]:.2f})", flush=True)  # fmt: skip
        studio.logged = scan_logs(stack.var_dir, seen)
        record(Row(mode, raw, studio))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    preset = parser.add_mutually_exclusive_group()
    preset.add_argument("--quick", action="store_true", help="N = 64, 256; 5 s windows")
    preset.add_argument(
        "--sweep",
        action="store_true",
        help=f"N = 1, 2, 4, ..., 2048; {SWEEP_SECONDS:.0f} s windows; rows to --json "
        f"(default {SWEEP_JSON.relative_to(ROOT)}) for benchmarks/plot_sweep.py",
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--seconds", type=float, default=None, help="measured window per size")
    parser.add_argument(
        "--json", type=Path, default=None, help="write the rows here (rewritten after each size)"
    )
    parser.add_argument("--timeout", type=float, default=None, help="per call, seconds")
    parser.add_argument(
        "--grace",
        type=float,
        default=None,
        help="seconds the studio's calls in flight at the window's end get to finish before "
        "they are cut (default: min(timeout, 10); --sweep: timeout + 1.5)",
    )
    parser.add_argument("--modes", nargs="+", default=["production", "embedded"],
                        choices=["production", "embedded"])  # fmt: skip
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="pool size per worker (default: the settings', 256 threads)",
    )
    parser.add_argument(
        "--pool",
        default="threads",
        choices=["threads", "prefork"],
        help="Celery pool of the workers",
    )
    args = parser.parse_args()
    if args.sweep:
        sizes = args.sizes or SWEEP_SIZES
        seconds = args.seconds or SWEEP_SECONDS
        timeout = args.timeout or SWEEP_TIMEOUT
        json_path: Path | None = args.json or SWEEP_JSON
    else:
        sizes = args.sizes or ([64, 256] if args.quick else [64, 256, 2048])
        seconds = args.seconds or (5.0 if args.quick else 20.0)
        timeout = args.timeout or (10.0 if args.quick else 30.0)
        json_path = args.json
    # A sweep waits out every call started in the window (a timed-out one included, with
    # its back-off), so that latencies at large N are measured rather than cut off.
    grace = args.grace or (timeout + BACKOFF_S + 1.0 if args.sweep else min(timeout, 10.0))
    ramp = 30.0 if args.quick else 60.0
    cores = psutil.cpu_count() or 1
    started = time.monotonic()
    print(f"scale: modes {', '.join(args.modes)}; N {sizes}; {seconds:.0f} s windows; "
          f"{timeout:.0f} s per-call timeout; test server {LATENCY_MS} ms; {cores} cores; "
          f"load at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)  # fmt: skip

    env = {
        "STUDIO_MODEL_NAME": "world-studio-test",
        "STUDIO_API_RATE_PER_S": "1000000",
        "STUDIO_API_RATE_BURST": "1000000",
        "STUDIO_API_STEP_TIMEOUT": str(int(timeout)),
        "STUDIO_WORKER_POOL": args.pool,
    }
    rows: list[Row] = []
    meta = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "seconds": seconds,
        "timeout": timeout,
        "grace": grace,
        "test_server_latency_ms": LATENCY_MS,
        "cores": cores,
        "production": f"{args.workers} Celery workers x {args.concurrency or 256} ({args.pool})",
        "load_at_start": os.getloadavg()[0],
    }

    def record(row: Row) -> None:
        rows.append(row)
        if json_path is not None:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            document = {"meta": meta, "rows": [r.as_json() for r in rows]}
            json_path.write_text(json.dumps(document, indent=1) + "\n")

    with model_server("--latency-ms", str(LATENCY_MS)) as server:
        env["STUDIO_MODEL_URL"] = server.url
        for mode in args.modes:
            if mode == "production":
                with (
                    private_services() as services,
                    production(services, env, args.workers, args.concurrency) as stack,
                ):
                    procs = studio_processes(stack, server.process.pid, services)
                    measure(
                        mode, stack, server.url, procs, sizes, seconds, timeout, grace, ramp, record
                    )
            else:
                with embedded_studio(extra_env=env) as stack:
                    procs = studio_processes(stack, server.process.pid, None)
                    measure(
                        mode, stack, server.url, procs, sizes, seconds, timeout, grace, ramp, record
                    )
    report(rows, cores)
    if "production" in args.modes:
        size = args.concurrency or "256"
        print(f"\nproduction: {args.workers} Celery workers x {size} ({args.pool}); "
              f"private Postgres (max_connections 100) and Redis.")  # fmt: skip
    if json_path is not None:
        print(f"Rows written to {json_path}")
    print(f"Total {time.monotonic() - started:.0f} s; load at end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    return 0


def _commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    return out.stdout.strip() or "unknown"


if __name__ == "__main__":
    sys.exit(main())
