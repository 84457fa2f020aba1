"""The rollout cap across workers, on a real Redis: it holds, frees on exit, and a
killed holder's slot comes back once its lease runs out."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any, cast

import pytest

from studio.rollouts import semaphore


@pytest.fixture
def shared(redis_service: str, settings: Any) -> Iterator[str]:
    settings.EMBEDDED = False
    settings.REDIS_URL = redis_service
    semaphore._redis.cache_clear()
    semaphore._acquire_script.cache_clear()
    key = f"test-{uuid.uuid4().hex}"
    yield key
    semaphore._redis().delete(semaphore.redis_key(key))
    semaphore._redis.cache_clear()
    semaphore._acquire_script.cache_clear()


def _holders(key: str) -> list[bytes]:
    return cast(list[bytes], semaphore._redis().zrange(semaphore.redis_key(key), 0, -1))


def test_a_third_caller_waits_while_two_hold_a_limit_of_two(shared: str) -> None:
    acquired = threading.Event()

    def third() -> None:
        with semaphore.shared_endpoint_slot(shared, limit=2, lease_s=30, poll_s=0.01):
            acquired.set()

    with semaphore.shared_endpoint_slot(shared, limit=2, lease_s=30):
        with semaphore.shared_endpoint_slot(shared, limit=2, lease_s=30):
            waiter = threading.Thread(target=third)
            waiter.start()
            assert not acquired.wait(0.5)
            assert len(_holders(shared)) == 2
        assert acquired.wait(10)  # one slot given back: the third caller gets it
    waiter.join(10)
    assert _holders(shared) == []


def test_a_dead_holders_slot_comes_back_when_its_lease_runs_out(shared: str) -> None:
    # A worker that was killed inside the block never removes its member.
    assert semaphore._acquire_script()(
        keys=[semaphore.redis_key(shared)], args=[1, 0.3, "killed-worker"]
    )
    seen: list[list[bytes]] = []

    def next_caller() -> None:
        with semaphore.shared_endpoint_slot(shared, limit=1, lease_s=30, poll_s=0.01):
            seen.append(_holders(shared))

    caller = threading.Thread(target=next_caller, daemon=True)
    caller.start()
    caller.join(10)
    assert len(seen) == 1, "the dead holder's slot never came back"
    assert b"killed-worker" not in seen[0] and len(seen[0]) == 1
    assert _holders(shared) == []
