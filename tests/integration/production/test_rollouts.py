"""A 20-episode rollout job on two Celery workers; one is SIGKILLed mid-job.

Redelivery: tasks are late-acked, so the killed worker's task stays unacknowledged in
Redis and is delivered again after the visibility timeout (10 s here, above the task
time limits). The redelivered task takes its row once the dead task's lease has
ended (at once, or when the watch it sends comes back: the dead task may have renewed
the lease after the message was fetched), declares the orphaned step failed and
retries it (same row), and the job still ends with 20 complete episodes and no
duplicate steps. The sweep's grace (300 s) is longer than the test's wait, so the
sweep cannot be what finishes the job.
"""

from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import require_service
from tests.integration.stack import (
    Stack,
    model_server_process,
    production_stack,
    wait_until,
)

pytestmark = pytest.mark.slow

ACTIONS = ["make", "make test", "echo BUILD OK"]
EPISODES = 20

CREATE = f"""
import json
from tests.integration.api.factories import make_project, make_scenario, make_user
from studio.rollouts.services import rollout_job_create
user = make_user("alice")
project = make_project(user)
scenario = make_scenario(project, max_steps=10)
job = rollout_job_create(project=project, scenario=scenario, user=user, episodes={EPISODES},
    max_steps=10, policy={{"kind": "scripted", "actions": {ACTIONS!r}}})
print(json.dumps({{"job": job.pk}}))
"""

#: Each unfinished row with its lease and last dispatch, and its episode's steps.
ROWS = """
from studio.episodes.models import Step
from studio.rollouts.models import RolloutJob
job = RolloutJob.objects.get(pk={job})
for row in job.rows.order_by("index").exclude(status="done").values():
    print(row)
    steps = Step.objects.filter(episode_id=row["episode_id"]).order_by("index")
    print(list(steps.values_list("index", "status", "attempts", "error")))
"""

REPORT = """
import json
from django.db.models import Count
from studio.episodes.models import Step
from studio.rollouts.models import RolloutJob
job = RolloutJob.objects.get(pk={job})
rows = list(job.rows.values("index", "status", "outcome", "episode_id", "steps_done"))
steps = Step.objects.filter(episode__rollout_row__job=job)
per_episode = {{}}
for step in steps.order_by("episode_id", "index"):
    per_episode.setdefault(step.episode_id, []).append([step.index, step.action, step.status])
print(json.dumps({{"status": job.status, "rows": rows, "steps": per_episode,
    "attempts": sorted(steps.values_list("attempts", flat=True))}}))
"""


@pytest.fixture
def model_server() -> Iterator[str]:
    # Slow enough that the job (60 steps, 4 at a time: about 11 s) is still running when
    # the test sees two episodes done, however slowly the machine answers its polls.
    with model_server_process("--latency-ms", "750") as url:
        yield url


def _progress(client: httpx.Client, job: int) -> dict[str, int]:
    html = client.get(f"/rollouts/{job}/", headers={"HX-Request": "true"}).text
    return {k: int(v) for k, v in re.findall(r'id="count-(\w+)">(\d+)<', html)}


def test_a_killed_worker_does_not_lose_or_duplicate_steps(model_server: str):
    require_service("PostgreSQL", 5432)
    require_service("Redis", 6379)
    env = {
        "STUDIO_MODEL_URL": model_server,
        "STUDIO_MODEL_NAME": "world-studio-test",
        "STUDIO_VISIBILITY_TIMEOUT": "10",
        "STUDIO_TASK_SOFT_TIME_LIMIT": "6",
        "STUDIO_TASK_TIME_LIMIT": "8",
        "STUDIO_ROLLOUT_ENDPOINT_CONCURRENCY": "4",
    }
    with production_stack(workers=2, extra_env=env) as stack:
        job = json.loads(stack.shell(CREATE).strip().splitlines()[-1])["job"]
        client = stack.login("alice")
        wait_until(lambda: _progress(client, job).get("done", 0) >= 2, 120, "two episodes done")
        assert _progress(client, job)["done"] < EPISODES  # killed mid-job
        stack.stop_worker("w1", signal.SIGKILL)

        try:
            wait_until(lambda: _progress(client, job).get("done", 0) == EPISODES, 240, "all")
        except TimeoutError:  # say which rows stuck, and how
            rows = stack.shell(ROWS.format(job=job))
            log = (stack.var_dir / "worker-w2.log").read_text(errors="replace")
            trouble = [line for line in log.splitlines() if "ERROR" in line or "WARNING" in line]
            pytest.fail(
                f"not all episodes done; rows and steps:\n{rows}\n"
                f"the surviving worker's errors and warnings:\n" + "\n".join(trouble[-30:])
            )
        report = _report(stack, job)

    print(
        "step attempts:",
        report["attempts"][-6:],
        "rows:",
        [r["steps_done"] for r in report["rows"]],
    )
    assert report["status"] == "done"
    assert [r["status"] for r in report["rows"]] == ["done"] * EPISODES
    assert {r["outcome"] for r in report["rows"]} == {"terminated"}
    assert len(report["steps"]) == EPISODES
    for steps in report["steps"].values():
        assert steps == [[i + 1, action, "done"] for i, action in enumerate(ACTIONS)]


#: A one-episode job whose row a task that died holds for 5 s more; then its task is sent.
HELD_BY_A_DEAD_TASK = """
import json
from datetime import timedelta
from django.utils import timezone
from studio.rollouts import services
from tests.integration.api.factories import make_project, make_scenario, make_user
user = make_user("bob")
project = make_project(user)
dispatch_rows, services._dispatch_rows = services._dispatch_rows, lambda job, indexes: None
job = services.rollout_job_create(project=project, scenario=make_scenario(project), user=user,
    episodes=1, max_steps=10, policy={"kind": "scripted", "actions": ["make"]})
until = timezone.now() + timedelta(seconds=5)
job.rows.update(status="running", lease_owner="a-dead-task", lease_until=until)
services._dispatch_rows = dispatch_rows
services.rollout_job_resume(job=job)
print(json.dumps({"job": job.pk}))
"""


def test_a_task_that_finds_a_dead_tasks_lease_comes_back_through_the_broker(model_server: str):
    """The watch (studio/rollouts/runner.py) on a real worker: a countdown task, with its
    ``watching`` argument, that the worker holds until the lease has ended."""
    require_service("PostgreSQL", 5432)
    require_service("Redis", 6379)
    env = {"STUDIO_MODEL_URL": model_server, "STUDIO_MODEL_NAME": "world-studio-test"}
    with production_stack(workers=1, extra_env=env, web=False) as stack:
        job = json.loads(stack.shell(HELD_BY_A_DEAD_TASK).strip().splitlines()[-1])["job"]
        report = _report(stack, job)
        log = (stack.var_dir / "worker-w1.log").read_text(errors="replace")

    assert report["status"] == "done"
    assert [(r["outcome"], r["steps_done"]) for r in report["rows"]] == [("actions exhausted", 1)]
    assert "task a-dead-task died holding the row" in log


def _report(stack: Stack, job: int) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        report: dict[str, Any] = json.loads(
            stack.shell(REPORT.format(job=job)).strip().splitlines()[-1]
        )
        if report["status"] == "done" or time.monotonic() > deadline:
            return report
        time.sleep(1)
