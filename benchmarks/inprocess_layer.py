"""CPU per group send of the embedded studio's channel layer, against Channels' own.

An embedded studio sends a step's events to its episode's group several times a step
(running, the coalesced deltas, the end; the step-ends group for the env API's waiters).
With N environments open, the layer holds about N groups, each with a member or two.
Channels' ``InMemoryChannelLayer`` looks through all of them for expired entries on
every send and receive, and starts a task per member; the studio's
``InProcessChannelLayer`` (studio/lib/layers.py) looks once a second and sends to the
members in turn. This times a group send to one episode's group, and its member's
receive, with ``--groups`` other groups open, for both layers in alternating rounds,
and prints CPU microseconds per send and the ratio (Channels' layer is the baseline).

    .venv/bin/python benchmarks/inprocess_layer.py           # 64 and 256 groups, 5 rounds
    .venv/bin/python benchmarks/inprocess_layer.py --quick   # 64 groups, 3 rounds
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from channels.layers import InMemoryChannelLayer  # noqa: E402

from studio.lib.layers import InProcessChannelLayer  # noqa: E402

MESSAGE = {"type": "step.delta", "step_id": 1, "index": 3, "seq": 7, "observation": "ok\n"}


async def cpu_per_send(layer: InMemoryChannelLayer, groups: int, sends: int) -> float:
    for group in range(groups):
        await layer.group_add(f"episode-{group}", f"page.{group}")
        await layer.group_add(f"steps-{group}", f"waiter.{group}")
    started = time.process_time()
    for _ in range(sends):
        await layer.group_send("episode-0", MESSAGE)
        await layer.receive("page.0")
    return (time.process_time() - started) / sends


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--sends", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="64 groups, 3 rounds of 2,000")
    args = parser.parse_args()
    sizes, sends, rounds = args.groups, args.sends, args.rounds
    if args.quick:
        sizes, sends, rounds = [64], 2_000, 3
    print(f"{'groups':>7}{'Channels us/send':>18}{'studio us/send':>16}{'ratio':>8}")
    for groups in sizes:
        channels, studio = [], []
        for _ in range(rounds):
            channels.append(asyncio.run(cpu_per_send(InMemoryChannelLayer(), groups, sends)))
            studio.append(asyncio.run(cpu_per_send(InProcessChannelLayer(), groups, sends)))
        base, ours = statistics.median(channels), statistics.median(studio)
        print(f"{groups:>7}{1e6 * base:>18.1f}{1e6 * ours:>16.1f}{base / ours:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
