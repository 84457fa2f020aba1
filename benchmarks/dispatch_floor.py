"""The floor of a step's dispatch: CPU per task of Celery as the studio configures it.

Issue 15 keeps Celery as the step's dispatcher (late acknowledgement, redelivery, the
step claim), and asks for P2 >= 0.5: on this box's two cores, shared with the test
server and the load driver, that leaves the studio well under a millisecond of CPU per
step (``scale.py`` prints the budget under "the box's limit"). This measures what the
dispatch alone costs, with no step in it: a task that does nothing, published by this
process and run by a real worker of the studio (``celery -A studio worker``: the
threads pool, acks_late, prefetch 1, the studio's Redis transport), both reading the
studio's settings. The baseline, in the same run, is the physical limit of moving the
same bytes through Redis: LPUSH here and BRPOP in a bare consumer process.

Both paths get the same paced load (``--rate`` messages a second for ``--seconds``),
then run until their queue is drained. Printed: CPU microseconds per message of the
publisher, the consumer process and Redis, and the ratios of Celery to the raw queue.

    .venv/bin/python benchmarks/dispatch_floor.py           # 100/s for 20 s, each path
    .venv/bin/python benchmarks/dispatch_floor.py --quick   # 100/s for 5 s

Needs the shared Postgres and Redis (``make bench`` starts them); the worker gets a
database and a Redis database number of its own (tests/integration/stack.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # type: ignore[import-untyped]  # noqa: E402
import redis  # noqa: E402
from _cpu import tree_cpu  # noqa: E402  (this folder)

from tests.integration.stack import production_stack, wait_until  # noqa: E402

#: The bare consumer: BRPOP until the queue stays empty for 5 s or says stop.
RAW_CONSUMER = """
import sys, redis
client = redis.Redis.from_url(sys.argv[1])
while (item := client.brpop(["bench:raw"], timeout=5)) is not None and item[1] != b"stop":
    pass
"""


def _redis_pid() -> int:
    for process in psutil.process_iter(["name", "cmdline"]):
        if process.info["name"] == "redis-server" and ":6379" in " ".join(
            process.info["cmdline"] or []
        ):
            return int(process.pid)
    raise SystemExit("no redis-server on 6379: run `make services` first")


def paced(publish: Callable[[int], object], rate: float, seconds: float) -> tuple[int, float]:
    """Call ``publish(i)`` ``rate`` times a second for ``seconds``; (calls, CPU seconds)."""
    interval, count = 1 / rate, int(rate * seconds)
    started, cpu = time.monotonic(), 0.0
    for index in range(count):
        delay = started + index * interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        before = time.process_time()
        publish(index)
        cpu += time.process_time() - before
    return count, cpu


def measure(
    consumer_pid: int,
    publish: Callable[[int], object],
    drained: Callable[[], bool],
    rate: float,
    seconds: float,
) -> dict[str, float]:
    """CPU microseconds per message of the publisher, the consumer and Redis."""
    redis_pid = _redis_pid()
    consumer_before, redis_before = tree_cpu(consumer_pid), tree_cpu(redis_pid)
    count, publisher = paced(publish, rate, seconds)
    wait_until(drained, 120, "the queue to drain", interval=0.05)
    return {
        "publisher": 1e6 * publisher / count,
        "consumer": 1e6 * (tree_cpu(consumer_pid) - consumer_before) / count,
        "redis": 1e6 * (tree_cpu(redis_pid) - redis_before) / count,
    }


def raw_queue(url: str, body: bytes, rate: float, seconds: float) -> dict[str, float]:
    client = redis.Redis.from_url(url)
    client.delete("bench:raw")
    consumer = subprocess.Popen([sys.executable, "-c", RAW_CONSUMER, url])
    try:
        time.sleep(1.0)  # its imports are not counted
        return measure(
            consumer.pid,
            lambda _: client.lpush("bench:raw", body),
            lambda: client.llen("bench:raw") == 0,
            rate,
            seconds,
        )
    finally:
        client.lpush("bench:raw", b"stop")
        consumer.wait(10)


def celery_tasks(worker_pid: int, url: str, rate: float, seconds: float) -> dict[str, float]:
    from studio.celery import app

    # A built-in task that returns its arguments: late-acknowledged by the studio's
    # settings (CELERY_TASK_ACKS_LATE), as episodes.run_step is.
    task = app.tasks["celery.accumulate"]
    client = redis.Redis.from_url(url)
    task.apply_async(args=(0,))  # the publisher's connection, not counted
    wait_until(lambda: client.llen("celery") == 0 and client.hlen("unacked") == 0, 30, "warm-up")
    return measure(
        worker_pid,
        lambda index: task.apply_async(args=(index,)),
        lambda: client.llen("celery") == 0 and client.hlen("unacked") == 0,
        rate,
        seconds,
    )


def celery_message(url: str) -> bytes:
    """The bytes one of those tasks is in the broker: sent to a queue no worker reads."""
    from studio.celery import app

    client = redis.Redis.from_url(url)
    app.tasks["celery.accumulate"].apply_async(args=(0,), queue="bench-probe")
    body = client.lpop("bench-probe")
    assert isinstance(body, bytes), "the probe message did not arrive"
    return body


def report(rows: dict[str, dict[str, float]]) -> None:
    print(f"{'per message, CPU us':<22}{'publisher':>11}{'consumer':>10}{'redis':>8}{'total':>9}")
    for name, row in rows.items():
        total = sum(row.values())
        print(f"{name:<22}{row['publisher']:>11.0f}{row['consumer']:>10.0f}"
              f"{row['redis']:>8.0f}{total:>9.0f}")  # fmt: skip
    raw, celery = rows["raw queue (LPUSH)"], rows["celery (acks_late)"]
    ratios = {kind: celery[kind] / raw[kind] for kind in raw if raw[kind]}
    print(f"{'celery / raw':<22}" + "".join(
        f"{ratios.get(kind, float('nan')):>{width}.1f}"
        for kind, width in (("publisher", 11), ("consumer", 10), ("redis", 8))
    ) + f"{sum(celery.values()) / sum(raw.values()):>9.1f}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=100.0, help="messages a second")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--quick", action="store_true", help="5 s for each path")
    args = parser.parse_args()
    seconds = 5.0 if args.quick else args.seconds
    quiet = {"STUDIO_DEBUG": "false", "STUDIO_TASK_LOG_LEVEL": "WARNING"}
    with production_stack(
        workers=1, web=False, extra_env={**quiet, "STUDIO_SWEEP_EVERY_S": "0"}
    ) as stack:
        os.environ.update(stack.env)
        import django

        django.setup()
        from django.conf import settings

        url = settings.CELERY_BROKER_URL
        worker = stack.workers["w1"]
        print(f"dispatch floor: {args.rate:.0f} messages/s for {seconds:.0f} s on each path; "
              f"load {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
        rows = {
            "raw queue (LPUSH)": raw_queue(url, celery_message(url), args.rate, seconds),
            "celery (acks_late)": celery_tasks(worker.pid, url, args.rate, seconds),
        }
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
