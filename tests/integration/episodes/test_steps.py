"""Running steps: idempotent delivery, failures and retry, cancel, fork, agents, waiting."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from simulator.errors import InvalidAction
from studio.episodes import services
from studio.episodes.models import Episode, Step
from studio.episodes.tasks import run_step
from studio.errors import RejectedInput
from studio.lib import db as studio_db
from studio.lib import inbox, stream_buffer
from studio.lib.tasks import wait_for_inprocess_tasks
from tests.integration.episodes import helpers

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_step_delivered_twice_runs_the_model_once_and_stays_one_step(model_server):
    project, user = helpers.project_with()
    model = helpers.endpoint(project, model_server.base_url)
    episode = helpers.episode(project, user, model=model)
    step = Step.objects.create(episode=episode, index=1, action="uname -a")  # not dispatched

    threads = [threading.Thread(target=run_step, args=(step.pk,)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    run_step(step.pk)  # a late redelivery

    step.refresh_from_db()
    assert step.status == "done" and step.attempts == 1
    assert sum(model_server.state.hits.values()) == 1
    assert Step.objects.filter(episode=episode).count() == 1


def test_two_submits_at_once_make_one_step(slow_server):
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, model=helpers.endpoint(project, slow_server.base_url))
    services.step_submit(episode=episode, action="ls")

    with pytest.raises(services.EpisodeBusy):
        services.step_submit(episode=episode, action="pwd")

    assert Step.objects.filter(episode=episode).count() == 1
    services.step_cancel(step=Step.objects.get(episode=episode))
    helpers.wait_for_step(Step.objects.get(episode=episode).pk)


def test_a_failed_step_keeps_its_reason_and_retry_runs_it_again(model_server):
    project, user = helpers.project_with()
    model = helpers.endpoint(project, "http://127.0.0.1:9")  # nothing listens there
    episode = helpers.episode(project, user, model=model)

    step = helpers.wait_for_step(services.step_submit(episode=episode, action="make test").pk)

    assert step.status == "failed" and step.error_kind == "BackendUnavailable"
    assert step.error
    model.base_url = model_server.base_url
    model.save()
    services.step_retry(step=step)
    step = helpers.wait_for_step(step.pk)
    assert step.status == "done" and step.attempts == 2 and step.error == ""
    assert Step.objects.filter(episode=episode).count() == 1


def test_retrying_a_step_that_is_not_the_last_changes_nothing(model_server, client):
    project, user = helpers.project_with()
    model = helpers.endpoint(project, "http://127.0.0.1:9")  # nothing listens there
    episode = helpers.episode(project, user, model=model)
    first = helpers.wait_for_step(services.step_submit(episode=episode, action="make").pk)
    second = helpers.wait_for_step(services.step_submit(episode=episode, action="ls").pk)
    assert (first.status, second.status) == ("failed", "failed")
    client.force_login(user)
    page = client.get(f"/episodes/{episode.pk}/").content.decode()
    assert "Retry step 2" in page and "Retry step 1" not in page

    with pytest.raises(RejectedInput, match="only the last step"):
        services.step_retry(step=first)

    first.refresh_from_db()
    assert first.status == "failed" and first.error  # not left pending: the episode is free
    model.base_url = model_server.base_url
    model.save()
    third = helpers.wait_for_step(services.step_submit(episode=episode, action="pwd").pk)
    assert third.status == "done"


def test_stop_closes_the_model_stream(slow_server):
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, model=helpers.endpoint(project, slow_server.base_url))
    step = services.step_submit(episode=episode, action="tail -f /var/log/syslog")
    helpers.wait_for_step(step.pk, statuses=("running",))

    services.step_cancel(step=step)
    step = helpers.wait_for_step(step.pk)

    assert step.status == "cancelled"
    assert slow_server.state.completed == 0  # the stream never ran to its end
    services.step_retry(step=step)  # a cancelled step can be run again
    assert helpers.wait_for_step(step.pk, timeout=60).status == "done"


def test_an_invalid_action_is_refused_by_the_domain():
    project, user = helpers.project_with()
    spec = {**helpers.TERMINAL_WORLD, "domain": "android", "initial_observation": ""}
    episode = helpers.episode(project, user, spec=spec)

    with pytest.raises(InvalidAction):
        services.step_submit(episode=episode, action='{"action_type": "fly"}')
    assert not Step.objects.exists()


def test_a_closed_episode_takes_no_step():
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)
    services.episode_close(episode=episode)

    with pytest.raises(services.EpisodeClosed):
        services.step_submit(episode=episode, action="ls")


def test_fork_copies_history_up_to_the_step_and_branches_from_there():
    project, user = helpers.project_with()
    model = helpers.replay_endpoint(project, ["one", "two", "three", "fork-two"])
    episode = helpers.episode(project, user, model=model)
    for action in ("echo 1", "echo 2"):
        helpers.wait_for_step(services.step_submit(episode=episode, action=action).pk)

    fork = services.episode_fork(episode=episode, at_step=1, user=user)
    perturbation = {"kind": "truncation", "mode": "enforced", "params": {"max_chars": 3}}
    step = services.step_submit(
        episode=fork, action="echo other", extra_perturbations=[perturbation]
    )
    step = helpers.wait_for_step(step.pk)

    assert fork.parent == episode and fork.forked_at_step == 1
    assert [s.action for s in fork.steps.order_by("index")] == ["echo 1", "echo other"]
    assert step.firings and step.firings[0]["kind"] == "truncation"
    assert [s.observation for s in episode.steps.order_by("index")] == ["one", "two"]


def test_a_scripted_agent_runs_n_steps_then_stops():
    project, user = helpers.project_with()
    model = helpers.replay_endpoint(project, ["a", "b", "c", "d"])
    agent = {"kind": "scripted", "actions": ["echo a", "echo b", "echo c", "echo d"]}
    episode = helpers.episode(project, user, model=model, agent=agent)

    services.agent_run(episode=episode, steps=3)
    for _ in range(200):
        wait_for_inprocess_tasks()
        episode.refresh_from_db()
        if episode.run_status == "idle":
            break
        threading.Event().wait(0.05)

    steps = list(episode.steps.order_by("index"))
    assert [s.action for s in steps] == ["echo a", "echo b", "echo c"]
    assert all(s.status == "done" for s in steps)


def test_a_perturbation_added_for_the_next_step_fires_once():
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, model=helpers.replay_endpoint(project, ["x" * 50] * 3))
    services.perturbation_add(
        episode=episode,
        perturbation={"kind": "truncation", "mode": "enforced", "params": {"max_chars": 5}},
        next_only=True,
    )

    first = helpers.wait_for_step(services.step_submit(episode=episode, action="ls").pk)
    second = helpers.wait_for_step(services.step_submit(episode=episode, action="ls").pk)

    assert first.firings and len(first.observation) < 50
    assert not second.firings and second.observation == "x" * 50


def test_step_wait_returns_the_finished_step(model_server):
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, model=helpers.endpoint(project, model_server.base_url))
    step = services.step_submit(episode=episode, action="whoami")

    finished = asyncio.run(services.step_wait(step.pk, timeout=30))

    assert finished.status == "done" and finished.observation


def test_a_wait_listening_since_before_the_submit_reads_the_step_once(model_server, monkeypatch):
    """The env API listens to the episode's step-ends group before it submits: the step's
    final message is what it waits for, and the row is read once, for the answer."""
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, model=helpers.endpoint(project, model_server.base_url))
    reads: list[object] = []

    async def counting_db_call(function, *args, **kwargs):
        reads.append(function)
        return await studio_db.db_call(function, *args, **kwargs)

    monkeypatch.setattr(services, "db_call", counting_db_call)

    async def submit_and_wait() -> Step:
        async with inbox.listening(Episode.step_ends_group_for(episode.pk)) as listened:
            step = await asyncio.to_thread(services.step_submit, episode=episode, action="id")
            return await services.step_wait(step.pk, timeout=30, inbox=listened)

    finished = asyncio.run(submit_and_wait())

    assert finished.status == "done" and finished.observation
    assert len(reads) == 1


def test_the_step_ends_group_gets_each_step_end_and_nothing_of_its_stream(model_server):
    """What an env API wait listens to: one message per step, when it has ended (the
    deltas and the "now running" message go to the pages' group only)."""
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, model=helpers.endpoint(project, model_server.base_url))

    async def listen_through_a_step() -> tuple[Step, list[dict[str, object]]]:
        async with inbox.listening(Episode.step_ends_group_for(episode.pk)) as listened:
            assert listened is not None
            step = await asyncio.to_thread(services.step_submit, episode=episode, action="id")
            first = await asyncio.wait_for(listened.get(), 30)
            done = await asyncio.to_thread(helpers.wait_for_step, step.pk)
            return done, [first, *(listened.get_nowait() for _ in range(listened.qsize()))]

    step, messages = asyncio.run(listen_through_a_step())

    assert step.status == "done" and step.partial_seq > 1  # it streamed several deltas
    assert [(m["type"], m["step_id"], m["final"]) for m in messages] == [("step", step.pk, True)]


@pytest.mark.slow
def test_the_same_episode_runs_on_the_embedded_model():
    """SmolLM2 through the local backend (the embedded default: no endpoint, no URL)."""
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)
    episode.sampling = {"max_tokens": 12, "temperature": 0.0}
    episode.save()

    steps = []
    for action in ("ls", "pwd"):
        step = services.step_submit(episode=episode, action=action)
        steps.append(helpers.wait_for_step(step.pk, timeout=240))

    assert all(s.status == "done" or s.error_kind == "MalformedOutput" for s in steps), [
        (s.status, s.error) for s in steps
    ]
    done = [s for s in steps if s.status == "done"]
    assert done and all(s.telemetry["completion_tokens"] > 0 for s in done)


def test_a_step_run_again_after_its_worker_died_streams_only_its_own_text(monkeypatch):
    """The dead worker's attempt left text in the stream buffer; a page reconnecting
    during the new attempt must not see it in front of the new text."""
    project, user = helpers.project_with()
    model = helpers.replay_endpoint(project, ["total 0\ndrwxr-xr-x 2 alice alice 40 ."])
    episode = helpers.episode(project, user, model=model)
    long_ago = timezone.now() - timedelta(hours=2)
    step = Step.objects.create(
        episode=episode, index=1, action="ls -la", status="running", attempts=1, started_at=long_ago
    )
    asyncio.run(stream_buffer.append(step.pk, 3, "", "STALE TEXT OF ATTEMPT ONE"))
    seen: list[str] = []
    append = stream_buffer.append

    async def recording_append(step_id: int, seq: int, reasoning: str, observation: str) -> None:
        await append(step_id, seq, reasoning, observation)
        snapshot = stream_buffer.read(step_id)
        seen.append(snapshot.observation if snapshot else "")

    monkeypatch.setattr(stream_buffer, "append", recording_append)
    run_step(step.pk)

    step.refresh_from_db()
    assert step.status == "done" and step.attempts == 2
    assert seen and all("STALE" not in text for text in seen)
    assert seen[-1] == step.observation[: len(seen[-1])]
    assert stream_buffer.read(step.pk) is None  # dropped once the row holds the text
