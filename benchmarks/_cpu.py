"""CPU time per call of this process, with a number of calls in flight at once.

Shared by the benchmarks that compare two ways of making the same call from one event
loop (model_call.py, api_handler.py): both sides are timed the same way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


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
