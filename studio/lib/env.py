"""Settings helpers that read the environment (healthchecks' ``envbool``/``envint`` style)."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def envlist(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def database_from_url(
    url: str, *, pool_size: int = 10, pool_timeout: float = 5.0, prepare_threshold: int = 0
) -> dict[str, object]:
    """Django DATABASES entry for a ``postgres://user:pass@host:port/name`` URL.

    Connections come from a psycopg pool of at most ``pool_size`` per process:
    Django's ASGI handler gives every concurrent request a thread of its own,
    and with persistent per-thread connections 64 waiting API calls meant 64
    connections, past Postgres's ``max_connections``. A request that finds the
    pool empty waits ``pool_timeout`` seconds, then fails with OperationalError,
    which the API answers with 503 and ``Retry-After``.

    With ``prepare_threshold`` > 0, parameters are bound on the server and a statement
    run that many times on a connection is prepared there: a step's dozen queries are
    the same few shapes, and Postgres then skips parsing and planning them (half its
    CPU per step). 0 binds on the client, as Django does by default, for a pooler such
    as PgBouncer in transaction mode that cannot keep prepared statements.
    """
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ValueError(f"STUDIO_DATABASE_URL must be a postgres:// URL, not {parts.scheme}://")
    binding: dict[str, object] = (
        {"server_side_binding": True, "prepare_threshold": prepare_threshold}
        if prepare_threshold > 0
        else {}
    )
    return {
        "ENGINE": "studio.lib.postgres",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        # The pool keeps connections open; Django must not also keep one per thread.
        "CONN_MAX_AGE": 0,
        "OPTIONS": {
            "pool": {"min_size": 1, "max_size": pool_size, "timeout": pool_timeout},
            **binding,
        },
    }
