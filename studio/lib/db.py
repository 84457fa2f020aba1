"""Giving a thread's database connection back before it waits.

Why: with a pool per process (``STUDIO_DB_POOL_SIZE``), a thread that holds its
connection while it waits (for a step, for an endpoint slot, for the model) keeps
it from everyone else; enough such threads and the ones doing real work find the
pool empty. Every place that waits calls :func:`release_connection` first.
"""

from __future__ import annotations

from django.db import connection


def release_connection() -> None:
    """Give this thread's pooled connection back to the pool.

    Unpooled connections (SQLite in embedded mode, where nothing is scarce) are kept,
    and so is one inside a transaction: closing it there would roll the transaction
    back under the caller's feet.
    """
    pooled = connection.settings_dict.get("OPTIONS", {}).get("pool")
    if pooled and not connection.in_atomic_block:
        connection.close()
