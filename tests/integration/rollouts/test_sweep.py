"""A rollout episode whose task message was lost is found by the sweep and finished."""

from __future__ import annotations

import pytest
from django.test import override_settings

from studio.lib import sweep
from studio.rollouts import services
from studio.rollouts.services import rollout_job_create
from tests.integration.api.factories import make_project, make_scenario, make_user
from tests.integration.rollouts.test_rollouts import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@override_settings(SWEEP_GRACE_S=0)
def test_a_row_whose_task_was_lost_is_sent_again_and_finishes(world_model, monkeypatch):
    user = make_user("alice")
    project = make_project(user)
    scenario = make_scenario(project, max_steps=30)
    with monkeypatch.context() as lose:
        lose.setattr(services, "dispatch", lambda *args: None)  # the messages never arrive
        job = rollout_job_create(
            project=project, scenario=scenario, user=user, episodes=1, max_steps=2,
            policy={"kind": "scripted", "actions": ["make", "make"]},
        )  # fmt: skip
    job.refresh_from_db()
    assert job.status == "running" and list(job.rows.values_list("status", flat=True)) == [
        "pending"
    ]

    assert sweep.sweep_all() >= 1
    job = wait_for(job, "done")
    assert list(job.rows.values_list("outcome", "steps_done")) == [("truncated", 2)]
