"""Django's PostgreSQL backend, reading ``timestamptz`` columns with psycopg's compiled loader.

Why: to return datetimes in its own time zone, Django registers a loader for
``timestamptz`` that subclasses psycopg's pure-Python one, even where psycopg's C
extension is installed. That loader parses each value in Python, about 6 µs per value
on this box against a fraction of one for the compiled loader, and a step reads a few
dozen timestamps (the step, its episode, its world revision, its scenario): about 5 % of
the web process's CPU per env API step (docs/performance.md).

The compiled loader returns values in the connection's time zone. Django sets the
session's time zone to its own, UTC when ``USE_TZ`` is on and the database has no
``TIME_ZONE`` of its own (as here), and psycopg gives UTC as ``datetime.timezone.utc``,
the very object Django's loader would attach: the values are the same. With any other
time zone the backend keeps Django's loader.
"""

from __future__ import annotations

import datetime
from functools import cache
from typing import Any, cast

from django.db.backends.postgresql import base
from psycopg import adapt, adapters
from psycopg.abc import AdaptContext
from psycopg.pq import Format

TIMESTAMPTZ_OID = adapters.types["timestamptz"].oid
#: psycopg's own default: the C loader where psycopg's extension is installed.
_COMPILED = cast(type[adapt.Loader], adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT))


class _UtcTimestampLoader(adapt.Loader):
    """The compiled loader, with the ``timezone`` that Django's ``create_cursor`` compares
    against its own (a mismatch would make it register its Python loader per cursor)."""

    timezone = datetime.UTC

    def __init__(self, oid: int, context: AdaptContext | None = None) -> None:
        super().__init__(oid, context)
        self._load = _COMPILED(oid, context).load

    def load(self, data: Any) -> datetime.datetime:
        return self._load(data)  # type: ignore[no-any-return]


@cache
def _with_compiled_timestamps(template: adapt.AdaptersMap) -> adapt.AdaptersMap:
    """Django's adapters for new connections, with the UTC loader on top (made once)."""
    context = adapt.AdaptersMap(template)
    context.register_loader(TIMESTAMPTZ_OID, _UtcTimestampLoader)
    return context


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params: dict[str, Any] = super().get_connection_params()
        if self.timezone is datetime.UTC and "context" in params:
            params["context"] = _with_compiled_timestamps(params["context"])
        return params
