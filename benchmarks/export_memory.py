"""Export memory does not grow with the number of rows.

Builds two collections in a scratch embedded studio (SQLite under a temporary
var/), a small one and one 50 times larger (10-step episodes; one AgentWorldBench
row per step), and exports each as AgentWorldBench JSONL through the same
streaming path the download and the background task use. For each it prints the
tracemalloc peak of the export loop (Python allocations while exporting, not the
setup), the rows written and rows/s (timed in a separate run without
tracemalloc), then the ratio of the two peaks: about 1 means constant memory.

    .venv/bin/python benchmarks/export_memory.py           # 5,000 vs 50,000 rows
    .venv/bin/python benchmarks/export_memory.py --quick   # 5,000 vs 15,000 rows

The small size already spans several chunks of items (``records.CHUNK`` episodes),
so both runs reach the steady state.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _scratch import setup_scratch_studio  # noqa: E402

setup_scratch_studio("export-bench-")

from django.core.management import call_command  # noqa: E402

from studio.core.models import Project  # noqa: E402
from studio.episodes.models import Episode, Step, StepStatus  # noqa: E402
from studio.exports.items import collection_pairs, resolve  # noqa: E402
from studio.exports.models import Collection, CollectionItem  # noqa: E402
from studio.exports.writing import ExportWriter, HashingSink, stream_bytes  # noqa: E402
from studio.worlds.services import world_create  # noqa: E402

STEPS_PER_EPISODE = 10
OBSERVATION = "drwxr-xr-x  2 user user 4096 Jan  1 00:00 src ✓\n" * 4


def build(project: Project, name: str, rows: int) -> Collection:
    world = world_create(project=project, spec={"domain": "terminal", "title": f"{name} box"})
    collection = Collection.objects.create(project=project, name=name)
    episodes = Episode.objects.bulk_create(
        Episode(
            project=project,
            world_revision=world.head,
            title=f"{name} {i}",
            domain="terminal",
            task="List the files",
        )
        for i in range(rows // STEPS_PER_EPISODE)
    )
    Step.objects.bulk_create(
        (
            Step(
                episode=episode,
                index=k,
                action=f"ls -la dir{k}",
                status=StepStatus.DONE,
                observation=OBSERVATION,
            )
            for episode in episodes
            for k in range(1, STEPS_PER_EPISODE + 1)
        ),
        batch_size=2000,
    )
    CollectionItem.objects.bulk_create(
        (CollectionItem(collection=collection, kind="episode", object_id=e.pk) for e in episodes),
        batch_size=2000,
    )
    return collection


def export(collection: Collection) -> tuple[int, int]:
    writer = ExportWriter("awb")
    sink = HashingSink()
    for _chunk in stream_bytes(
        writer, resolve(collection.project, collection_pairs(collection)), sink
    ):
        pass
    return writer.counts.records, sink.bytes


def measure(collection: Collection) -> tuple[int, int, float, int]:
    started = time.perf_counter()
    rows, size = export(collection)
    elapsed = time.perf_counter() - started
    tracemalloc.start()
    export(collection)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return rows, size, rows / elapsed, peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="5,000 vs 15,000 rows")
    args = parser.parse_args()
    small, large = (5_000, 15_000) if args.quick else (5_000, 50_000)
    call_command("migrate", verbosity=0)
    project = Project.objects.create(name="Bench", slug="bench")
    results = {}
    for rows in (small, large):
        collection = build(project, f"rows-{rows}", rows)
        results[rows] = measure(collection)
        written, size, rate, peak = results[rows]
        print(
            f"{written:>7} rows  {size / 1e6:7.1f} MB  {rate:8.0f} rows/s  "
            f"export peak {peak / 1e6:6.2f} MB (tracemalloc)"
        )
    ratio = results[large][3] / results[small][3]
    print(f"rows x{large / small:g}: peak memory ratio {ratio:.2f} (1.0 = constant)")


if __name__ == "__main__":
    main()
