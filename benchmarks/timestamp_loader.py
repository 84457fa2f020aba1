"""Reading ``timestamptz`` values: Django's PostgreSQL backend against the studio's.

Django's backend loads each timestamp with psycopg's pure-Python loader; the studio's
(studio/lib/postgres) uses psycopg's compiled one where the values come out the same
(docs/performance.md). Each round reads the same rows of timestamps through both
backends, and the same rows cast to integers, which costs the query and the transfer but
no timestamp parsing (the floor). It prints the CPU microseconds per value above that
floor for each backend, and their ratio.

    .venv/bin/python benchmarks/timestamp_loader.py           # 2,000 rows x 8 columns, 5 rounds
    .venv/bin/python benchmarks/timestamp_loader.py --quick   # 3 rounds

Needs the shared PostgreSQL on 127.0.0.1:5432 (``make bench`` starts it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _scratch import setup_scratch_studio  # noqa: E402

setup_scratch_studio("timestamp-bench-")

from django.db.utils import ConnectionHandler  # noqa: E402

from studio.lib.env import database_from_url  # noqa: E402

DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
ROWS, COLUMNS = 2000, 8
COLUMN = "now() - n * interval '1 second'"
TIMESTAMPS = f"SELECT {', '.join([COLUMN] * COLUMNS)} FROM generate_series(1, {ROWS}) n"
FLOOR = TIMESTAMPS.replace(COLUMN, f"extract(epoch from {COLUMN})::bigint")


def cpu_per_read(connection: Any, sql: str, reads: int = 10) -> float:
    """CPU seconds of one read of ``sql`` (the best of ``reads``: the least disturbed)."""
    best = float("inf")
    with connection.cursor() as cursor:
        for _ in range(reads):
            started = time.process_time()
            cursor.execute(sql)
            cursor.fetchall()
            best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    args = parser.parse_args()
    studio = database_from_url(DSN)
    databases = {
        "default": studio,
        "studio": studio,
        "django": {**studio, "ENGINE": "django.db.backends.postgresql"},
    }
    handler = ConnectionHandler(databases)
    values = ROWS * COLUMNS
    per_value: dict[str, list[float]] = {"django": [], "studio": []}
    for _ in range(3 if args.quick else 5):
        for alias in per_value:
            connection = handler[alias]
            floor = cpu_per_read(connection, FLOOR)
            spent = cpu_per_read(connection, TIMESTAMPS)
            per_value[alias].append(max(spent - floor, 0.0) / values * 1e6)
    for alias in ("django", "studio"):
        postgres: Any = handler[alias]  # Postgres's wrapper (close_pool)
        postgres.close()
        postgres.close_pool()
    django_us = statistics.median(per_value["django"])
    studio_us = statistics.median(per_value["studio"])
    print(f"{ROWS} rows x {COLUMNS} timestamptz columns; CPU us per value above the integer floor")
    print(f"  Django's backend (pure-Python loader): {django_us:6.2f} us")
    print(f"  the studio's backend (compiled loader): {studio_us:6.2f} us")
    print(f"  ratio Django / studio: {django_us / max(studio_us, 0.01):.1f}x")


if __name__ == "__main__":
    main()
