from __future__ import annotations

import asyncio

import pytest

from simulator.review.bounded import map_bounded


async def test_it_runs_exactly_concurrency_requests_at_once_and_hands_on_each_result():
    in_flight, peak, finished = 0, 0, []
    full = asyncio.Event()

    async def work(n: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight == 3:
            full.set()
        # Run one at a time, this would never see three in flight and time out.
        await asyncio.wait_for(full.wait(), timeout=30)
        in_flight -= 1
        return n * n

    await map_bounded(range(7), work, concurrency=3, on_result=lambda n, r: finished.append((n, r)))
    assert peak == 3
    assert sorted(finished) == [(n, n * n) for n in range(7)]


async def test_results_arrive_in_the_order_the_work_finishes():
    gates = {n: asyncio.Event() for n in range(3)}
    order: list[int] = []

    async def work(n: int) -> int:
        await gates[n].wait()
        if n > 0:
            gates[n - 1].set()  # 2 finishes first, then 1, then 0
        return n

    gates[2].set()
    await map_bounded([0, 1, 2], work, concurrency=3, on_result=lambda n, _: order.append(n))
    assert order == [2, 1, 0]


async def test_a_failing_request_is_raised_not_swallowed():
    async def work(n: int) -> int:
        if n == 1:
            raise RuntimeError("judge down")
        return n

    with pytest.raises(ExceptionGroup) as caught:
        await map_bounded([0, 1], work, concurrency=0, on_result=lambda *_: None)
    assert caught.group_contains(RuntimeError, match="judge down")
