"""A Celery worker keeps its database connection pool from one task to the next.

Celery's Django fixup would otherwise close the pool around every task in a
prefork child (celery/celery#10554), and every step would open new Postgres
connections: see docs/performance.md, "Scale: per-step CPU".
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from celery.fixups.django import DjangoWorkerFixup  # type: ignore[attr-defined]  # not in the stubs
from celery.signals import task_postrun, task_prerun

from studio.celery import app


def test_the_fixup_never_closes_the_pool_at_a_task_boundary(monkeypatch):
    fixup = DjangoWorkerFixup(app)
    fixup.worker = SimpleNamespace(pool_cls="celery.concurrency.prefork:TaskPool")
    closed: list[bool] = []
    monkeypatch.setattr(fixup, "_close_database", lambda: closed.append(True))
    task = SimpleNamespace(request=SimpleNamespace(is_eager=False))

    for _ in range(1000):
        fixup.on_task_prerun(sender=task)
        fixup.on_task_postrun(sender=task)

    assert closed == []


@pytest.mark.parametrize("signal", [task_prerun, task_postrun])
def test_a_task_boundary_gives_the_connections_back_instead(signal, monkeypatch):
    given_back: list[bool] = []
    monkeypatch.setattr("studio.celery.close_old_connections", lambda: given_back.append(True))

    signal.send(sender=None)

    assert given_back == [True]
