"""CPU time, measured one way for every benchmark: per call of this process, and of
another process with its children.

``cpu_per_call`` is shared by the benchmarks that compare two ways of making the same call
from one event loop (model_call.py, api_handler.py), so both sides are timed the same way;
``tree_cpu`` by those that count the studio's processes (scale.py, load_ws.py through it,
dispatch_floor.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

import psutil  # type: ignore[import-untyped]  # (installed with accelerate)


async def cpu_per_call(call: Callable[[], Awaitable[object]], calls: int, at_once: int) -> float:
    """CPU seconds of this process per ``call()``, ``calls`` in all, ``at_once`` in flight."""
    remaining = calls

    async def lane() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    started = time.process_time()
    await asyncio.gather(*(lane() for _ in range(at_once)))
    return (time.process_time() - started) / calls


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process tree, dead descendants included (through reaped times)."""
    try:
        root = psutil.Process(pid)
        total = 0.0
        for proc in [root, *root.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                t = proc.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
        return total
    except psutil.Error:
        return 0.0
