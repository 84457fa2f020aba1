"""What a step event costs each socket watching the episode: a few queries, not one per
related row (every socket re-renders the step and the side panels on each event)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studio.episodes.consumers import EpisodeConsumer
from studio.episodes.models import Step, StepStatus
from studio.episodes.selectors import busy_step, last_observation
from tests.integration.episodes import helpers

pytestmark = pytest.mark.django_db


def test_a_step_event_is_rendered_with_three_queries() -> None:
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)
    step = Step.objects.create(
        episode=episode, index=1, action="ls", status=StepStatus.DONE, observation="a b"
    )
    consumer = EpisodeConsumer()
    consumer.scope = {"user": user}
    consumer.join(user, episode.pk)

    with CaptureQueriesContext(connection) as queries:
        html = consumer._step_html(step.pk, 0)

    assert 'id="step-1"' in html and 'id="episode-status"' in html
    # The step with its episode and world, the busy step and the last observation;
    # the episode and its world are not fetched one by one after the step.
    assert len(queries) == 3, [q["sql"] for q in queries.captured_queries]


@pytest.mark.parametrize("status", [StepStatus.PENDING, StepStatus.RUNNING])
def test_a_busy_step_event_reads_only_the_step_and_sends_only_the_status_row(status) -> None:
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)
    step = Step.objects.create(episode=episode, index=1, action="ls", status=status)
    consumer = EpisodeConsumer()
    consumer.scope = {"user": user}
    consumer.join(user, episode.pk)

    with CaptureQueriesContext(connection) as queries:
        html = consumer._step_html(step.pk, 0)

    assert len(queries) == 1, [q["sql"] for q in queries.captured_queries]
    assert 'id="step-1"' in html
    assert 'id="busy-step"' in html and "step 1 " in html  # the status row names this step
    assert 'id="composer-elements"' not in html and 'id="perturbations"' not in html


def test_the_panels_read_the_latest_busy_step_and_the_last_done_observation() -> None:
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)
    initial = last_observation(episode)
    assert busy_step(episode) is None

    for index, status, observation in [
        (1, StepStatus.DONE, "first"),
        (2, StepStatus.DONE, "second"),
        (3, StepStatus.FAILED, "not seen: failed"),
        (4, StepStatus.RUNNING, "not seen: running"),
    ]:
        Step.objects.create(
            episode=episode, index=index, action="ls", status=status, observation=observation
        )
    other = helpers.episode(project, user)
    Step.objects.create(
        episode=other, index=9, action="ls", status=StepStatus.DONE, observation="x"
    )

    busy = busy_step(episode)
    assert busy is not None and busy.index == 4
    assert last_observation(episode) == "second"
    assert last_observation(other) == "x" and busy_step(other) is None
    assert initial == episode.world_revision.spec.get("initial_observation", "")


def test_a_lagging_socket_renders_a_step_s_state_once_and_a_retry_again() -> None:
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)
    step = Step.objects.create(episode=episode, index=1, action="ls", status=StepStatus.PENDING)
    consumer = EpisodeConsumer()
    consumer.scope = {"user": user}
    consumer.join(user, episode.pk)
    # The socket handles the step's events only after it has ended ("pending",
    # "running", then the final one): the first renders the final fragment.
    Step.objects.filter(pk=step.pk).update(
        status=StepStatus.DONE, observation="a b", partial_seq=4, finished_at=timezone.now()
    )

    rendered = [consumer._step_html(step.pk, seq) for seq in (0, 0, 4)]

    assert 'id="step-1"' in rendered[0] and rendered[1:] == ["", ""]
    # Run again (as a retry leaves it: pending, no end time): shown again.
    Step.objects.filter(pk=step.pk).update(status=StepStatus.PENDING, finished_at=None)
    assert 'id="step-1"' in consumer._step_html(step.pk, 0)
