"""A real production-mode studio in processes: Postgres, Redis, Celery workers, uvicorn.

Each stack gets its own Postgres database, Redis database number and var/
directory, so stacks never see each other's data. Tests drive it over HTTP and
WebSockets exactly as a browser or a trainer would.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _next_redis_db() -> int:
    """A Redis database number no other running stack uses, even in another pytest process.

    Database 0 holds the shared counter; stacks take 1-15 in turn.
    """
    out = subprocess.run(
        ["redis-cli", "-n", "0", "INCR", "studio-test-stack-db"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return int(out.stdout.strip()) % 15 + 1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until(predicate: Any, timeout: float, what: str, interval: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


@dataclass
class Stack:
    env: dict[str, str]
    var_dir: Path
    database: str
    port: int = 0
    web: subprocess.Popen[bytes] | None = None
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "python"), "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=check,
            timeout=300,
        )

    def shell(self, code: str) -> str:
        """Run Python in the stack's Django (e.g. to create rows) and return its stdout."""
        return self.manage("shell", "-c", code).stdout

    def start_web(self) -> None:
        self.port = free_port()
        log = open(self.var_dir / "web.log", "wb")  # noqa: SIM115  (kept open for the process)
        self.web = subprocess.Popen(
            [str(BIN / "uvicorn"), "studio.asgi:application", "--host", "127.0.0.1",
             "--port", str(self.port), "--log-level", "warning"],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        wait_until(self._web_answers, 60, f"uvicorn on {self.port} ({self.var_dir}/web.log)")

    def _web_answers(self) -> bool:
        assert self.web is not None
        if self.web.poll() is not None:
            raise RuntimeError(f"web server exited: {(self.var_dir / 'web.log').read_text()}")
        try:
            return httpx.get(f"{self.base_url}/login/", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def start_worker(
        self, name: str = "w1", concurrency: int | None = None
    ) -> subprocess.Popen[bytes]:
        """A worker as deployed (settings' pool: threads, ``STUDIO_WORKER_THREADS``)."""
        log_path = self.var_dir / f"worker-{name}.log"
        log = open(log_path, "wb")  # noqa: SIM115  (kept open for the process)
        threads = [] if concurrency is None else ["--concurrency", str(concurrency)]
        process = subprocess.Popen(
            [str(BIN / "celery"), "-A", "studio", "worker", "--loglevel", "INFO", *threads,
             "-n", f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.workers[name] = process

        def ready() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"worker exited: {log_path.read_text()}")
            return re.search(r"\bready\b", log_path.read_text(errors="replace")) is not None

        wait_until(ready, 60, f"celery worker {name} ({log_path})")
        return process

    def stop_worker(self, name: str, sig: int = signal.SIGTERM) -> None:
        process = self.workers.pop(name)
        if sig == signal.SIGKILL:
            # Kill the whole worker: the main process and any children it has.
            subprocess.run(["pkill", "-KILL", "-P", str(process.pid)], check=False)
        process.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
        if process.poll() is None:
            process.kill()
            process.wait()

    def login(self, username: str = "alice", password: str = "correct-horse-9") -> httpx.Client:
        """An HTTP client signed in as a (new or existing) user, with the CSRF token set."""
        self.shell(
            "from django.contrib.auth import get_user_model; U = get_user_model(); "
            f"u = U.objects.filter(username={username!r}).first() or "
            f"U.objects.create_user({username!r}, '', {password!r}); print(u.pk)"
        )
        client = httpx.Client(base_url=self.base_url, timeout=30)
        page = client.get("/login/")
        token = client.cookies["csrftoken"]
        assert page.status_code == 200
        response = client.post(
            "/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
            headers={"Referer": f"{self.base_url}/login/"},
        )
        assert response.status_code == 302, response.text[:500]
        client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
        client.headers["Referer"] = f"{self.base_url}/"
        return client

    def ws_headers(self, client: httpx.Client) -> dict[str, str]:
        cookies = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
        return {"Cookie": cookies, "Origin": self.base_url}

    def close(self) -> None:
        for name in list(self.workers):
            self.stop_worker(name)
        if self.web is not None:
            self.web.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.web.wait(timeout=10)
            if self.web.poll() is None:
                self.web.kill()
        if self.database:
            _drop_database(self.database)


def _admin_connection() -> psycopg.Connection[Any]:
    return psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True)


def _drop_database(name: str) -> None:
    with _admin_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def production_stack(
    *, workers: int = 1, extra_env: dict[str, str] | None = None, web: bool = True
) -> Iterator[Stack]:
    """Start a migrated production-mode studio; stop it and drop its database afterwards."""
    database = f"studio_test_{uuid.uuid4().hex[:10]}"
    with _admin_connection() as conn:
        conn.execute(f'CREATE DATABASE "{database}" TEMPLATE "{_migrated_template()}"')
    redis_db = _next_redis_db()
    var_dir = Path(tempfile.mkdtemp(prefix="studio-stack-"))
    env = {**_production_env(var_dir, database, redis_db), **(extra_env or {})}
    subprocess.run(["redis-cli", "-n", str(redis_db), "FLUSHDB"], check=True, capture_output=True)
    stack = Stack(env=env, var_dir=var_dir, database=database)
    try:
        for index in range(workers):
            stack.start_worker(f"w{index + 1}")
        if web:
            stack.start_web()
        yield stack
    finally:
        stack.close()


@functools.cache
def _migrated_template() -> str:
    """A database migrated once per test process, which each stack's database copies:
    a copy takes about 0.1 s, a migrate in a new process about 8 s. Dropped at exit."""
    name = f"studio_test_template_{uuid.uuid4().hex[:10]}"
    with _admin_connection() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    atexit.register(_drop_database, name)
    var_dir = Path(tempfile.mkdtemp(prefix="studio-template-"))
    # No Redis number of its own: a migrate sends no tasks.
    env = _production_env(var_dir, name, redis_db=0)
    Stack(env=env, var_dir=var_dir, database="").manage("migrate", "--noinput", "-v", "0")
    return name


def _production_env(var_dir: Path, database: str, redis_db: int) -> dict[str, str]:
    return {
        **_base_env(var_dir),
        "STUDIO_REDIS_URL": f"redis://127.0.0.1:6379/{redis_db}",
        "STUDIO_DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{database}",
        "STUDIO_SECRET_KEY": uuid.uuid4().hex * 2,
        # Tests read which tasks a worker ran from its log.
        "STUDIO_TASK_LOG_LEVEL": "INFO",
    }


def _base_env(var_dir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("STUDIO_")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "studio.settings",
            "STUDIO_DEBUG": "true",
            "STUDIO_VAR_DIR": str(var_dir),
            "STUDIO_SERVE_STATIC": "true",
            "STUDIO_MODEL_CACHE_DIR": str(ROOT / "var" / "models"),
            "HF_HUB_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


@contextlib.contextmanager
def embedded_studio(*, extra_env: dict[str, str] | None = None) -> Iterator[Stack]:
    """Start the studio as ``make run`` does (SQLite, in-process tasks) on a free port."""
    var_dir = Path(tempfile.mkdtemp(prefix="studio-embedded-"))
    env = {**_base_env(var_dir), **(extra_env or {})}
    stack = Stack(env=env, var_dir=var_dir, database="")
    try:
        stack.manage("migrate", "--noinput", "-v", "0")
        stack.start_web()
        yield stack
    finally:
        stack.close()


@dataclass(frozen=True)
class ModelServer:
    """The protocol test server's process, and its URL."""

    url: str
    process: subprocess.Popen[bytes]


@contextlib.contextmanager
def model_server(*options: str) -> Iterator[ModelServer]:
    """``python -m simulator.serve`` in a process of its own (as a deployment's model server
    is), with ``options`` on its command line, once it answers. The benchmarks that count
    its CPU take its process; tests want only the URL (:func:`model_server_process`)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator.serve", "--port", str(port), *options],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        try:
            return httpx.get(f"{url}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, 30, "the protocol test server")
        yield ModelServer(url, process)
    finally:
        process.terminate()
        process.wait(10)


@contextlib.contextmanager
def model_server_process(*options: str) -> Iterator[str]:
    """:func:`model_server`'s URL."""
    with model_server(*options) as server:
        yield server.url
