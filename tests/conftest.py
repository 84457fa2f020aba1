"""Service checks and shared fixtures. The environment itself is set by studio.testing."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
REDIS_URL = "redis://127.0.0.1:6379"
POSTGRES_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def require_service(name: str, port: int) -> None:
    """Fail under CI=true, skip loudly elsewhere, when a service the test needs is down."""
    if _port_open(port):
        return
    message = f"{name} is not running on 127.0.0.1:{port} (make test starts it)"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def redis_service() -> str:
    require_service("Redis", 6379)
    return REDIS_URL


@pytest.fixture
def postgres_service() -> str:
    require_service("PostgreSQL", 5432)
    return POSTGRES_DSN


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
