from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Iterator

import pytest

from simulator.serve import RunningServer, ServerOptions, start_server_in_thread

LOOPBACK = {"127.0.0.1", "::1", "localhost"}


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with start_server_in_thread() as running:
        yield running


@pytest.fixture(scope="module")
def reasoning_server() -> Iterator[RunningServer]:
    with start_server_in_thread(ServerOptions(reasoning=True)) as running:
        yield running


@pytest.fixture
def fresh_server() -> Iterator[RunningServer]:
    """A server of its own, so hit counts and once-only faults start from zero."""
    with start_server_in_thread() as running:
        yield running


@contextlib.contextmanager
def no_network() -> Iterator[list[object]]:
    """Refuse (and record) every socket connection that does not go to this machine."""
    attempts: list[object] = []
    real_connect = socket.socket.connect
    real_create = socket.create_connection

    def connect(self: socket.socket, address: object) -> None:
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and host not in LOOPBACK:
            attempts.append(address)
            raise OSError("network disabled by the test")
        real_connect(self, address)  # type: ignore[arg-type]

    def create_connection(
        address: tuple[str, int], *args: object, **kwargs: object
    ) -> socket.socket:
        if address[0] not in LOOPBACK:
            attempts.append(address)
            raise OSError("network disabled by the test")
        return real_create(address, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", connect)
        patch.setattr(socket, "create_connection", create_connection)
        yield attempts


async def wait_until(condition: Callable[[], bool], *, deadline_s: float = 20.0) -> bool:
    """Poll ``condition``; a generous deadline only keeps a broken test from hanging."""
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            return False
        await asyncio.sleep(0.01)
    return True


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture(scope="session")
def local_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def local_model(local_cache_dir):
    """The embedded model, loaded once per session from its GGUF with networking refused.

    Returns (model path, cache dir) with the model in the process-wide cache; the
    connection attempts seen while loading are kept on the fixture for a test.
    """
    from simulator.backends.local import embedded_model_path, load_model

    path = embedded_model_path()
    with no_network() as attempts:
        loaded = load_model(path, cache_dir=local_cache_dir)
    LOAD_RECORD.update(attempts=list(attempts), source=loaded.source)
    return path, local_cache_dir


LOAD_RECORD: dict[str, object] = {}
