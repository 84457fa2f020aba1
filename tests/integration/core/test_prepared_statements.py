"""Production's database settings prepare repeated statements on Postgres (or, set to 0,
bind on the client as a transaction-mode pooler needs)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db.utils import ConnectionHandler

from studio.lib.env import database_from_url


def prepared_after_repeats(dsn: str, threshold: int, repeats: int) -> int:
    """Statements Postgres holds prepared for the connection after one query ran ``repeats`` times."""
    # An alias of its own: Django keeps connection pools by alias, process-wide.
    alias = f"prepared-{uuid.uuid4().hex[:8]}"
    database = database_from_url(dsn, prepare_threshold=threshold)
    handler = ConnectionHandler({"default": database, alias: database})
    connection: Any = handler[alias]  # Postgres's wrapper (close_pool)
    try:
        with connection.cursor() as cursor:
            for number in range(repeats):
                cursor.execute("SELECT %s::int + 1", [number])
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            row = cursor.fetchone()
    finally:
        connection.close()
        connection.close_pool()
    assert row is not None
    return int(row[0])


@pytest.fixture
def dsn(postgres_service: str, django_db_blocker: Any) -> Iterator[str]:
    """The shared Postgres, reached outside the test database (which is SQLite)."""
    with django_db_blocker.unblock():
        yield postgres_service


@pytest.mark.parametrize(("threshold", "expected"), [(2, 1), (0, 0)])
def test_a_statement_repeated_past_the_threshold_is_prepared(
    dsn: str, threshold: int, expected: int
) -> None:
    assert prepared_after_repeats(dsn, threshold, repeats=4) == expected


def test_a_statement_run_fewer_times_than_the_threshold_is_not_prepared(dsn: str) -> None:
    assert prepared_after_repeats(dsn, 5, repeats=3) == 0
