"""The database gate: finishing work goes before new work, and no slot is ever lost."""

from __future__ import annotations

import asyncio

from studio.lib.db import Priority, _Gate


async def _served_order(gate: _Gate, priorities: list[Priority]) -> list[Priority]:
    served: list[Priority] = []

    async def waiter(priority: Priority) -> None:
        await gate.acquire(priority)
        served.append(priority)
        gate.release()

    waiters = []
    for priority in priorities:
        waiters.append(asyncio.create_task(waiter(priority)))
        await asyncio.sleep(0)  # queued in this order
    gate.release()  # the holder leaves
    await asyncio.gather(*waiters)
    return served


def test_queued_calls_are_served_finish_first_then_in_arrival_order() -> None:
    async def run() -> list[Priority]:
        gate = _Gate(1)
        await gate.acquire(Priority.START)  # the slot is taken
        order = [Priority.START, Priority.WAIT, Priority.FINISH, Priority.START, Priority.FINISH]
        return await _served_order(gate, order)

    served = asyncio.run(run())
    assert served == [
        Priority.FINISH,
        Priority.FINISH,
        Priority.WAIT,
        Priority.START,
        Priority.START,
    ]


def test_a_cancelled_waiter_does_not_keep_or_lose_a_slot() -> None:
    async def run() -> int:
        gate = _Gate(1)
        await gate.acquire(Priority.START)
        cancelled = asyncio.create_task(gate.acquire(Priority.FINISH))
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.sleep(0)
        gate.release()
        # Both the freed slot and a fresh acquire work: nothing is held by the cancelled one.
        await asyncio.wait_for(gate.acquire(Priority.START), 1)
        gate.release()
        return gate.free

    assert asyncio.run(run()) == 1
