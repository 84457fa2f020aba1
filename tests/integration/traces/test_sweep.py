"""A simulation whose task was lost, or whose worker died, is found by the sweep and run."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from studio.core.models import ModelEndpoint
from studio.lib import sweep
from studio.lib.tasks import wait_for_inprocess_tasks
from studio.traces import services
from studio.traces.models import Simulation, Trace

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def trace(project, fixtures_dir):
    services.import_file(
        project=project, path=fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
    )
    return Trace.objects.get()


def _endpoint(trace):
    return ModelEndpoint.objects.create(
        project=trace.project,
        name="replay",
        kind="replay",
        config={"observations": ["a", "b", "c"]},
    )


@override_settings(SWEEP_GRACE_S=0)
def test_a_simulation_whose_task_was_lost_is_run(trace, owner, monkeypatch):
    with monkeypatch.context() as lose:
        lose.setattr("studio.traces.services.simulations.dispatch", lambda *args: None)
        simulation = services.simulation_create(
            trace=trace, user=owner, mode="teacher_forced", endpoint=_endpoint(trace)
        )
    assert Simulation.objects.get(pk=simulation.pk).status == "pending"

    assert sweep.sweep_all() == 1
    wait_for_inprocess_tasks(timeout=60)
    simulation.refresh_from_db()
    assert (simulation.status, simulation.turns.count()) == ("done", 3)


@override_settings(SWEEP_GRACE_S=60)
def test_an_abandoned_running_simulation_is_taken_over(trace, owner):
    simulation = Simulation.objects.create(
        project=trace.project,
        trace=trace,
        mode="teacher_forced",
        endpoint=_endpoint(trace),
        status="running",
        started_at=timezone.now() - timedelta(hours=1),
        dispatched_at=timezone.now() - timedelta(hours=1),
    )
    running = Simulation.objects.create(
        project=trace.project, trace=trace, mode="teacher_forced", status="running",
        started_at=timezone.now(), dispatched_at=timezone.now() - timedelta(hours=1),
    )  # fmt: skip

    assert sweep.sweep_all() == 1  # the one a living worker holds is left alone
    wait_for_inprocess_tasks(timeout=60)
    simulation.refresh_from_db()
    running.refresh_from_db()
    assert (simulation.status, simulation.turns.count()) == ("done", 3)
    assert running.status == "running"
