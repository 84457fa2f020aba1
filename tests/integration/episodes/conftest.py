from __future__ import annotations

from collections.abc import Iterator

import pytest

from simulator.serve.app import ServerOptions
from simulator.serve.threaded import RunningServer, start_server_in_thread


@pytest.fixture
def model_server() -> Iterator[RunningServer]:
    """The protocol test server, streaming at a pace that makes several deltas per step."""
    with start_server_in_thread(ServerOptions(tokens_per_s=400, reasoning=True)) as server:
        yield server


@pytest.fixture
def slow_server() -> Iterator[RunningServer]:
    with start_server_in_thread(ServerOptions(tokens_per_s=15, latency_ms=100)) as server:
        yield server
