"""CPU per step claim: the claim's queryset updated by Django, compiled once, and raw SQL.

A worker claims every step it runs with one conditional UPDATE (studio/episodes/runner.py).
Written as ``queryset.update(**values)``, Django built and compiled that UPDATE on every
call; ``CompiledUpdate`` (studio/lib/compiled.py) compiles it once per process and binds
the new values. This claims a step that does not exist (the UPDATE finds no row, so every
call does the same work) the three ways, in alternating rounds, on a scratch embedded
studio's SQLite: Django's update (the baseline), the compiled one, and the compiled SQL
sent straight through the cursor (the floor: what is left is the database's own work).

    .venv/bin/python benchmarks/compiled_update.py           # 5 rounds of 3,000 claims
    .venv/bin/python benchmarks/compiled_update.py --quick   # 3 rounds of 1,000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _scratch import setup_scratch_studio  # noqa: E402

setup_scratch_studio("compiled-update-")

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from studio.episodes.runner import _claim  # noqa: E402

MISSING = 987_654


def cpu_per_claim(claim: Callable[[], object], claims: int) -> float:
    started = time.process_time()
    for _ in range(claims):
        claim()
    return (time.process_time() - started) / claims


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=3_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="3 rounds of 1,000")
    args = parser.parse_args()
    claims, rounds = (1_000, 3) if args.quick else (args.claims, args.rounds)
    call_command("migrate", verbosity=0)
    now = timezone.now()
    stale = now - timedelta(minutes=11)

    def django_update() -> object:
        queryset, values = _claim.definition(MISSING, now, stale)
        return queryset.update(**values)

    def compiled() -> object:
        return _claim.run(MISSING, now, stale)

    with CaptureQueriesContext(connection) as captured:
        compiled()
    # The same statement with its values written in (as Django logs it): the floor.
    statement = str(captured.captured_queries[-1]["sql"])
    settings.DEBUG = False  # as deployed: no query log from here on

    def floor() -> object:
        with connection.cursor() as cursor:
            cursor.execute(statement)
            return cursor.rowcount

    results: dict[str, list[float]] = {"django": [], "compiled": [], "floor": []}
    for _ in range(rounds):
        results["django"].append(cpu_per_claim(django_update, claims))
        results["compiled"].append(cpu_per_claim(compiled, claims))
        results["floor"].append(cpu_per_claim(floor, claims))
    medians = {name: 1e6 * statistics.median(values) for name, values in results.items()}
    print(f"CPU us per claim ({rounds} rounds of {claims}, medians; DEBUG off):")
    for name, value in medians.items():
        print(f"  {name:<10}{value:>8.0f}")
    print(f"django / compiled: {medians['django'] / medians['compiled']:.1f}x; "
          f"compiled / floor: {medians['compiled'] / medians['floor']:.1f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
