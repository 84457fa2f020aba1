"""Rollouts in this process (in-process tasks). pytest-django's in-memory SQLite refuses
concurrent writers, so these use one episode at a time; many episodes in parallel are tested
against a live embedded studio (test_embedded_live.py) and in production mode."""

from __future__ import annotations

import time

import pytest

from studio.episodes.models import Episode
from studio.rollouts.models import RolloutJob
from studio.rollouts.services import rollout_job_cancel, rollout_job_create, rollout_job_resume
from tests.integration.api.factories import make_project, make_scenario, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def wait_for(job: RolloutJob, status: str, timeout: float = 60) -> RolloutJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status == status:
            return job
        time.sleep(0.1)
    raise AssertionError(
        f"job is {job.status}, rows {list(job.rows.values_list('status', flat=True))}"
    )


@pytest.fixture
def setup(db):
    user = make_user("alice")
    project = make_project(user)
    return user, project, make_scenario(project, max_steps=30)


def test_the_step_limit_truncates(setup, world_model):
    user, project, scenario = setup

    job = rollout_job_create(
        project=project, scenario=scenario, user=user, episodes=1, max_steps=2,
        policy={"kind": "scripted", "actions": ["make", "make", "make"]},
    )  # fmt: skip
    wait_for(job, "done")

    assert list(job.rows.values_list("outcome", "steps_done")) == [("truncated", 2)]
    assert set(Episode.objects.filter(rollout_row__job=job).values_list("status", flat=True)) == {
        "closed"
    }


def test_a_finished_job_gathers_its_episodes_into_the_named_collection(setup, world_model):
    from studio.exports.models import Collection

    user, project, scenario = setup
    job = rollout_job_create(
        project=project, scenario=scenario, user=user, episodes=1, max_steps=1,
        policy={"kind": "scripted", "actions": ["make"]}, collection_name="Nightly builds",
    )  # fmt: skip
    wait_for(job, "done")

    collection = Collection.objects.get(project=project, name="Nightly builds")
    episodes = Episode.objects.filter(rollout_row__job=job).values_list("pk", flat=True)
    assert list(collection.items.values_list("kind", "object_id")) == [
        ("episode", pk) for pk in episodes
    ]
    assert collection.created_by == user


def test_cancel_stops_the_job_and_its_tasks(setup, world_model, monkeypatch):
    from studio.rollouts import services
    from studio.rollouts.runner import rollout_advance

    dispatched: list[int] = []
    monkeypatch.setattr(services, "_dispatch_rows", lambda job, indexes: dispatched.extend(indexes))
    user, project, scenario = setup
    job = rollout_job_create(
        project=project, scenario=scenario, user=user, episodes=3, max_steps=30,
        policy={"kind": "scripted", "actions": ["make"] * 30},
    )  # fmt: skip
    assert rollout_job_resume(job=job) == 3  # nothing finished yet: every row again

    rollout_job_cancel(job=job)
    rollout_advance(job.pk, 0)  # a task still queued when the job was cancelled

    job.refresh_from_db()
    assert dispatched == [0, 1, 2, 0, 1, 2]
    assert job.status == "cancelled"
    assert set(job.rows.values_list("status", flat=True)) == {"cancelled"}
    assert job.rows.get(index=0).episode is None  # the late task started nothing
    assert rollout_job_resume(job=job) == 0


def test_a_rerun_task_continues_the_same_episode(setup, world_model):
    from studio.rollouts.runner import rollout_advance

    user, project, scenario = setup
    job = rollout_job_create(
        project=project, scenario=scenario, user=user, episodes=1, max_steps=5,
        policy={"kind": "scripted", "actions": ["make", "make test", "echo BUILD OK"]},
    )  # fmt: skip
    wait_for(job, "done")

    rollout_advance(job.pk, 0)  # a late duplicate delivery

    row = job.rows.get()
    assert row.episode is not None and row.episode.steps.count() == 3


def test_a_task_whose_row_was_taken_while_it_waited_for_a_slot_leaves_it(
    setup, world_model, monkeypatch
):
    """The slot wait can outlast the lease; a redelivered copy then claims the row.
    The waiting task must neither step the episode nor send a second chain of tasks."""
    from contextlib import contextmanager
    from datetime import timedelta

    from django.utils import timezone

    from studio.rollouts import runner, services

    sent: list[tuple[int, ...]] = []
    monkeypatch.setattr(services, "_dispatch_rows", lambda job, indexes: None)
    monkeypatch.setattr(runner, "dispatch", lambda task, *args: sent.append(args))
    user, project, scenario = setup
    job = rollout_job_create(
        project=project, scenario=scenario, user=user, episodes=1, max_steps=5,
        policy={"kind": "scripted", "actions": ["make"]},
    )  # fmt: skip

    @contextmanager
    def slot_after_another_claimed(episode):
        job.rows.update(lease_owner="the-other-task", lease_until=timezone.now() + timedelta(60))
        yield

    monkeypatch.setattr(runner, "_slot", slot_after_another_claimed)
    runner.rollout_advance(job.pk, 0)

    row = job.rows.get()
    assert row.episode is not None and row.episode.steps.count() == 0
    assert row.lease_owner == "the-other-task"
    assert sent == []


def test_the_progress_page_and_its_socket_fragment(client, setup, world_model):
    user, project, scenario = setup
    client.force_login(user)

    created = client.post(
        "/rollouts/",
        {"scenario": scenario.pk, "episodes": 1, "max_steps": 3, "base_seed": 0,
         "policy": "scripted", "actions": "make\necho BUILD OK"},
    )  # fmt: skip
    job = RolloutJob.objects.get()
    wait_for(job, "done")
    page = client.get(f"/rollouts/{job.pk}/").content.decode()
    fragment = client.get(f"/rollouts/{job.pk}/", HTTP_HX_REQUEST="true").content.decode()

    assert created.status_code == 302
    assert 'ws-connect="/ws/rollouts/' in page
    assert '<span id="count-done">1</span>' in fragment and "<html" not in fragment
    assert client.get("/rollouts/").status_code == 200


def test_another_projects_job_is_not_found(client, setup, world_model):
    user, project, scenario = setup
    job = rollout_job_create(
        project=project, scenario=scenario, user=user, episodes=1, max_steps=1,
        policy={"kind": "scripted", "actions": ["make"]},
    )  # fmt: skip
    client.force_login(make_user("mallory"))

    assert client.get(f"/rollouts/{job.pk}/").status_code == 404
    assert client.post(f"/rollouts/{job.pk}/cancel").status_code == 404
    wait_for(job, "done")


def _held_by(job: RolloutJob, owner: str, seconds: float) -> None:
    from datetime import timedelta

    from django.utils import timezone

    until = timezone.now() + timedelta(seconds=seconds)
    job.rows.update(status="running", lease_owner=owner, lease_until=until)


def test_a_copy_that_finds_a_dead_tasks_lease_takes_the_row_when_the_lease_ends(
    setup, world_model, monkeypatch, caplog
):
    """Redis redelivers a message a visibility timeout after it was fetched, but the dead
    task renewed its lease later (after its slot wait): the copy finds the lease held.
    Without a watch on that lease, the episode's chain of tasks ends there for good."""
    from studio.rollouts import runner, services

    monkeypatch.setattr(services, "_dispatch_rows", lambda job, indexes: None)
    user, project, scenario = setup
    job = rollout_job_create(
        project=project, scenario=scenario, user=user, episodes=1, max_steps=5,
        policy={"kind": "scripted", "actions": ["make"]},
    )  # fmt: skip
    _held_by(job, "a-dead-task", seconds=1)

    runner.rollout_advance(job.pk, 0)  # the redelivered copy

    job = wait_for(job, "done")
    assert list(job.rows.values_list("outcome", "steps_done")) == [("actions exhausted", 1)]
    assert "task a-dead-task died holding the row" in caplog.text


def test_a_watch_comes_back_while_its_owner_holds_the_row_and_ends_when_it_lets_go(
    setup, world_model, monkeypatch
):
    from studio.rollouts import runner, services

    watches: list[tuple[float, tuple[int, ...], str]] = []
    monkeypatch.setattr(services, "_dispatch_rows", lambda job, indexes: None)
    monkeypatch.setattr(
        runner,
        "dispatch_later",
        lambda delay, task, *args, watching: watches.append((delay, args, watching)),
    )
    user, project, scenario = setup
    job = rollout_job_create(
        project=project, scenario=scenario, user=user, episodes=1, max_steps=5,
        policy={"kind": "scripted", "actions": ["make"]},
    )  # fmt: skip
    _held_by(job, "a-live-task", seconds=60)  # renewed since the watch was sent

    runner.rollout_advance(job.pk, 0, watching="a-live-task")

    [(delay, args, watching)] = watches
    assert 59 < delay <= 60 + runner.WATCH_MARGIN_S
    assert (args, watching) == ((job.pk, 0), "a-live-task")

    job.rows.update(lease_owner="", lease_until=None)  # it stepped, and sent the next task
    runner.rollout_advance(job.pk, 0, watching="a-live-task")

    row = job.rows.get()
    assert row.episode is None and row.lease_owner == ""
    assert len(watches) == 1
