"""A step whose task message was lost is found by the sweep and run; the episode never stays busy.

The rows are written as a lost message leaves them: a step pending with no task in the
queue, and a step a dead worker left running (its message gone with a Redis restart).
The worker's sweeper (every second here) sends their tasks again; the claim runs each once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.conftest import require_service
from tests.integration.stack import (
    Stack,
    model_server_process,
    production_stack,
    wait_until,
)

pytestmark = pytest.mark.slow

LOSE = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from studio.core.models import Project, Membership
from studio.worlds.services import world_create
from studio.episodes.models import Step
from studio.episodes.services import episode_create
u = get_user_model().objects.create_user("sweep")
ids = []
for name, status, started in (("pending", "pending", None),
                              ("running", "running", timezone.now() - timedelta(hours=1))):
    p = Project.objects.create(name=f"Lost {name}", slug=f"lost-{name}")
    Membership.objects.create(project=p, user=u, role="owner")
    w = world_create(project=p, user=u, spec={"domain": "terminal", "title": "Box",
                                              "initial_observation": "$ "})
    e = episode_create(project=p, user=u, world_revision=w.head)
    # Written straight to the database: no task was ever sent for these steps.
    s = Step.objects.create(episode=e, index=1, action="ls", status=status, started_at=started,
                            dispatched_at=timezone.now() - timedelta(minutes=10))
    ids.append(s.pk)
print(json.dumps(ids))
"""
REPORT = """
import json
from studio.episodes.models import Step
print(json.dumps([[s.status, s.attempts, s.observation != ""]
                  for s in Step.objects.filter(pk__in={ids}).order_by("pk")]))
"""


@pytest.fixture
def model_url() -> Iterator[str]:
    with model_server_process("--latency-ms", "50") as url:
        yield url


def test_the_sweep_runs_steps_whose_task_was_lost(model_url: str) -> None:
    require_service("PostgreSQL", 5432)
    require_service("Redis", 6379)
    env = {
        "STUDIO_MODEL_URL": model_url,
        "STUDIO_SWEEP_EVERY_S": "1",
        "STUDIO_SWEEP_GRACE_S": "2",
    }
    with production_stack(workers=1, extra_env=env, web=False) as stack:
        ids = json.loads(stack.shell(LOSE).strip().splitlines()[-1])

        def report(stack: Stack = stack) -> list[list[object]]:
            out = stack.shell(REPORT.format(ids=ids))
            return list(json.loads(out.strip().splitlines()[-1]))

        wait_until(lambda: all(row[0] == "done" for row in report()), 60, "the lost steps")
        rows = report()
    assert rows == [["done", 1, True], ["done", 1, True]]
