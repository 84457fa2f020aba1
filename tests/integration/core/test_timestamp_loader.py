"""Production's Postgres backend reads timestamps with psycopg's compiled loader, and
the values are the ones Django's own loader gives (studio/lib/postgres/base.py)."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db.backends.postgresql.psycopg_any import BaseTzLoader
from django.db.utils import ConnectionHandler
from psycopg.pq import Format

from studio.lib.env import database_from_url
from studio.lib.postgres.base import TIMESTAMPTZ_OID

STORED = "2026-12-06 23:59:58.123456+05:30"
EXPECTED = datetime.datetime(2026, 12, 6, 18, 29, 58, 123456, tzinfo=datetime.UTC)


def read_back(database: dict[str, Any]) -> tuple[datetime.datetime, type[Any]]:
    """A stored timestamp read through Django, and the loader the connection used."""
    alias = f"timestamps-{uuid.uuid4().hex[:8]}"  # Django keeps pools by alias
    handler = ConnectionHandler({"default": database, alias: database})
    connection: Any = handler[alias]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s::timestamptz", [STORED])
            row = cursor.fetchone()
            loader = cursor.cursor.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
    finally:
        connection.close()
        connection.close_pool()
    assert row is not None
    return row[0], loader


@pytest.fixture
def dsn(postgres_service: str, django_db_blocker: Any) -> Iterator[str]:
    """The shared Postgres, reached outside the test database (which is SQLite)."""
    with django_db_blocker.unblock():
        yield postgres_service


def test_timestamps_come_back_in_utc_through_the_compiled_loader(dsn: str) -> None:
    value, loader = read_back(database_from_url(dsn))
    assert value == EXPECTED and value.tzinfo is datetime.UTC
    assert not issubclass(loader, BaseTzLoader)  # not Django's pure-Python loader


def test_django_s_own_backend_gives_the_same_value(dsn: str) -> None:
    database = {**database_from_url(dsn), "ENGINE": "django.db.backends.postgresql"}
    value, loader = read_back(database)
    assert value == EXPECTED and value.tzinfo is datetime.UTC
    assert issubclass(loader, BaseTzLoader)
