"""Run many judge requests a bounded number at a time, handing on each result as it lands.

The studio's judge task uses it so that turns are judged concurrently (a judge
server batches requests; one at a time leaves it idle) and each score can be
saved and shown while the others are still being judged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def map_bounded(
    items: Sequence[T],
    work: Callable[[T], Awaitable[R]],
    *,
    concurrency: int,
    on_result: Callable[[T, R], None],
) -> None:
    """Await ``work(item)`` for every item, at most ``concurrency`` (at least 1) at once,
    calling ``on_result(item, result)`` in the order they finish. An exception from
    ``work`` cancels the rest and is raised (as an ``ExceptionGroup``)."""
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(item: T) -> None:
        async with semaphore:
            result = await work(item)
        on_result(item, result)

    async with asyncio.TaskGroup() as group:
        for item in items:
            group.create_task(one(item))
