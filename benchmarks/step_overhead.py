"""Studio step overhead: a step through the studio against the same call made directly.

P1 = (studio step time) / (direct call time), with the world model answering in about
2 s per step (the protocol test server with a first-token latency). The studio path is
the whole embedded pipeline: step_submit -> pending row -> task thread -> engine ->
coalesced deltas to the channel group -> the saved step. The direct path is
``simulator.engine.step`` on the same state and backend. Also printed: WebSocket
(channel-group) delta messages per second of a streaming step, and per step.

    .venv/bin/python benchmarks/step_overhead.py [--steps 5] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _scratch import setup_scratch_studio  # noqa: E402

setup_scratch_studio("studio-bench-")

from channels.layers import get_channel_layer  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from simulator import engine  # noqa: E402
from simulator.backends import create_backend  # noqa: E402
from simulator.serve.app import ServerOptions  # noqa: E402
from simulator.serve.threaded import start_server_in_thread  # noqa: E402
from studio.core.models import Membership, ModelEndpoint, Project  # noqa: E402
from studio.episodes import services  # noqa: E402
from studio.episodes.models import Step  # noqa: E402
from studio.episodes.selectors import backend_spec, episode_state  # noqa: E402
from studio.lib.channels import DELTA  # noqa: E402
from studio.lib.tasks import wait_for_inprocess_tasks  # noqa: E402
from studio.worlds.services import world_create  # noqa: E402


class GroupListener:
    """Counts the delta messages the episode's group carries, with their arrival times."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.deltas: list[tuple[int, float]] = []  # (step id, time)
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self._listen(), self.loop)
        self.ready.wait(10)

    async def _listen(self) -> None:
        layer = get_channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(self.group, channel)
        receiving = asyncio.ensure_future(layer.receive(channel))  # makes this loop the home loop
        self.ready.set()
        while True:
            message = await receiving
            if message.get("type") == DELTA:
                self.deltas.append((message["step_id"], time.monotonic()))
            receiving = asyncio.ensure_future(layer.receive(channel))


def setup(base_url: str) -> Any:
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench", "", "bench-pass-123")
    project = Project.objects.create(name="Bench", slug="bench")
    Membership.objects.create(project=project, user=user, role="owner")
    world = world_create(
        project=project,
        user=user,
        spec={"domain": "terminal", "title": "Bench box", "initial_observation": "$ "},
    )
    model = ModelEndpoint.objects.create(
        project=project,
        name="bench",
        kind="openai",
        base_url=base_url,
        model="bench",
        config={"max_retries": 0},
    )
    assert world.head is not None
    return services.episode_create(
        project=project, user=user, world_revision=world.head, endpoint=model
    )


def studio_step(episode: Any, action: str) -> tuple[float, Step]:
    started = time.perf_counter()
    step = services.step_submit(episode=episode, action=action)
    while True:
        wait_for_inprocess_tasks(60)
        step.refresh_from_db()
        if step.status not in ("pending", "running"):
            return time.perf_counter() - started, step
        time.sleep(0.001)


def direct_step(episode: Any, index: int, action: str) -> float:
    state = episode_state(episode, before=index)
    backend = create_backend(backend_spec(episode))

    async def run() -> None:
        try:
            await engine.step(state, action, backend)
        finally:
            await backend.aclose()

    started = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 steps")
    args = parser.parse_args()
    steps = 2 if args.quick else args.steps
    # ~1.7 s to the first token, then ~40 tokens at 120 tokens/s: about 2 s a call.
    options = ServerOptions(latency_ms=1700, tokens_per_s=120, reasoning=True)
    with start_server_in_thread(options) as server:
        episode = setup(server.base_url)
        listener = GroupListener(episode.group_name)
        studio_times, direct_times, rates, per_step = [], [], [], []
        for n in range(1, steps + 1):
            action = f"cat notes-{n}.txt"
            direct_times.append(direct_step(episode, n, action))
            seconds, step = studio_step(episode, action)
            assert step.status == "done", step.error
            studio_times.append(seconds)
            times = [t for sid, t in listener.deltas if sid == step.pk]
            per_step.append(len(times))
            if len(times) > 1:
                rates.append((len(times) - 1) / (times[-1] - times[0]))
    direct = statistics.median(direct_times)
    studio = statistics.median(studio_times)
    print(f"steps: {steps}")
    print(
        f"direct engine call   median {direct:.3f} s  ({', '.join(f'{t:.2f}' for t in direct_times)})"
    )
    print(
        f"studio step          median {studio:.3f} s  ({', '.join(f'{t:.2f}' for t in studio_times)})"
    )
    print(
        f"P1 studio / direct = {studio / direct:.3f}  (overhead {1000 * (studio - direct):.0f} ms a step)"
    )
    if rates:
        print(
            f"WS delta messages per second per streaming step: median {statistics.median(rates):.1f}"
            f" (max {max(rates):.1f}); messages per step: {per_step}"
        )


if __name__ == "__main__":
    main()
