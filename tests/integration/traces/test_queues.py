from __future__ import annotations

from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from studio.core.models import Membership
from studio.errors import RejectedInput
from studio.traces import services
from studio.traces.models import (
    JudgeScore,
    QueueAssignment,
    QueueItem,
    SimulatedTurn,
    Simulation,
    Trace,
    TraceTurn,
)
from studio.traces.queues import annotator_progress, next_assignment, queue_create, queue_refresh

pytestmark = pytest.mark.django_db


def member(project, name, role="editor"):
    user = get_user_model().objects.create_user(name, "", "pw-12345678")
    Membership.objects.create(project=project, user=user, role=role)
    return user


@pytest.fixture
def team(project, owner):
    return [owner, member(project, "bob"), member(project, "carol")]


def simulation_with(project, turns, title="Build box"):
    trace = Trace.objects.create(
        project=project,
        domain="terminal",
        source="trajectory",
        title=title,
        content_hash=f"hash-{title}",
    )
    simulation = Simulation.objects.create(project=project, trace=trace, status="done")
    for i in range(1, turns + 1):
        real = TraceTurn.objects.create(trace=trace, index=i, action=f"ls {i}", observation=f"r{i}")
        SimulatedTurn.objects.create(simulation=simulation, turn=real, index=i, observation=f"s{i}")
    return simulation


def add_turn(simulation, index):
    real = TraceTurn.objects.create(
        trace=simulation.trace, index=index, action="pwd", observation="/app"
    )
    SimulatedTurn.objects.create(simulation=simulation, turn=real, index=index, observation="/srv")


def test_it_gives_each_item_k_different_annotators_and_spreads_the_load(project, team):
    simulation = simulation_with(project, 4)

    queue = queue_create(
        project=project,
        name="Round 1",
        annotators=team,
        annotators_per_item=2,
        scope={"simulation": simulation.pk},
    )

    pairs = list(QueueAssignment.objects.values_list("item_id", "user_id"))
    assert len(pairs) == 8 and len(set(pairs)) == 8  # 4 items × 2, no pair twice
    per_item = Counter(item for item, _ in pairs)
    assert set(per_item.values()) == {2}
    assert sorted(Counter(user for _, user in pairs).values()) == [2, 3, 3]
    assert queue.items.count() == 4


def test_it_never_assigns_an_item_twice_to_one_person(project, team):
    simulation = simulation_with(project, 3)
    queue = queue_create(
        project=project, name="Q", annotators=team, annotators_per_item=3, scope={}
    )
    before = QueueAssignment.objects.count()

    assert queue_refresh(queue=queue) == 0  # refreshing plans nothing new
    assert queue_refresh(queue=queue) == 0
    item = QueueItem.objects.earliest("id")
    with pytest.raises(IntegrityError), transaction.atomic():
        QueueAssignment.objects.create(item=item, user=team[0])
    with pytest.raises(IntegrityError), transaction.atomic():
        QueueItem.objects.create(queue=queue, simulated_turn=item.simulated_turn)

    assert before == QueueAssignment.objects.count() == 9
    add_turn(simulation, 4)
    assert queue_refresh(queue=queue) == 1
    newest = QueueItem.objects.latest("id")
    assert sorted(newest.assignments.values_list("user_id", flat=True)) == sorted(
        u.pk for u in team
    )


def test_it_refuses_viewers_and_more_annotators_per_item_than_chosen(project, owner):
    viewer = member(project, "victor", role="viewer")
    with pytest.raises(RejectedInput, match="victor"):
        queue_create(project=project, name="Q", annotators=[owner, viewer])
    with pytest.raises(RejectedInput, match="1 to 1"):
        queue_create(project=project, name="Q", annotators=[owner], annotators_per_item=2)


def test_next_item_moves_on_as_the_annotator_finishes_and_progress_follows(
    signed_in, project, owner, team
):
    simulation = simulation_with(project, 3)
    queue = queue_create(project=project, name="Solo", annotators=[owner], scope={})
    first = next_assignment(queue=queue, user=owner)
    assert first is not None and first.item.simulated_turn.index == 1

    response = signed_in.get(f"/traces/queues/{queue.pk}/next/")
    assert response["Location"] == f"/traces/simulations/{simulation.pk}/?turn=1&queue={queue.pk}"
    review = signed_in.get(response["Location"]).content.decode()
    assert 'id="queue-nav"' in review and f"/traces/queues/{queue.pk}/next/" in review

    signed_in.post(f"/traces/turns/{first.item.simulated_turn_id}/annotate/", {"verdict": "accept"})
    # Scores alone do not finish an item; a correction does.
    second_turn = SimulatedTurn.objects.get(simulation=simulation, index=2)
    services.annotation_save(turn=second_turn, user=owner, data={"format": "3"})
    second = next_assignment(queue=queue, user=owner)
    assert second is not None and second.item.simulated_turn.index == 2
    services.annotation_save(turn=second_turn, user=owner, data={"corrected_observation": "x"})

    assert signed_in.get(f"/traces/queues/{queue.pk}/next/")["Location"].endswith(
        f"?turn=3&queue={queue.pk}"
    )
    [progress] = annotator_progress(queue=queue)
    assert (progress.user, progress.done, progress.assigned) == (owner, 2, 3)
    page = signed_in.get(f"/traces/queues/{queue.pk}/").content.decode()
    assert '<tr data-annotator="alice"><td>alice</td><td>2</td><td>3</td>' in page


def test_a_member_outside_the_queue_has_no_next_item(client, project, team):
    queue = queue_create(project=project, name="Theirs", annotators=team[1:], scope={})
    client.force_login(team[0])
    assert client.get(f"/traces/queues/{queue.pk}/next/").status_code == 404


def test_it_creates_a_queue_from_the_form(signed_in, project, team):
    simulation = simulation_with(project, 2)
    response = signed_in.post(
        "/traces/queues/new/",
        {
            "project": project.slug,
            "name": "From the form",
            "simulation": simulation.pk,
            "annotators": [u.pk for u in team],
            "annotators_per_item": "2",
        },
    )
    assert response.status_code == 302
    listing = signed_in.get(f"/traces/queues/?project={project.slug}").content.decode()
    assert "From the form" in listing
    assert QueueAssignment.objects.count() == 4


# Ten turns, alice and bob: both accept 4, both reject 3, alice accepts / bob rejects 2,
# alice rejects / bob accepts 1. By hand (tests/unit/review/test_agreement.py):
#   p_o = 0.7, p_e = 0.6·0.5 + 0.4·0.5 = 0.5, κ = 0.2 / 0.5 = 0.40; α = 14/33 ≈ 0.42.
VERDICTS = [("accept", "accept")] * 4 + [("reject", "reject")] * 3
VERDICTS += [("accept", "reject")] * 2 + [("reject", "accept")]
# Alice's format scores against the judge's on the first four turns:
#   (1,1) (2,3) (3,3) (5,4): quadratic-weighted κ = 1 − 0.5 / (54/16) = 23/27 ≈ 0.85.
FORMAT_VS_JUDGE = [(1, 1), (2, 3), (3, 3), (5, 4)]


def test_the_queue_page_shows_agreement_figures_with_their_item_counts(signed_in, project, owner):
    bob = member(project, "bob")
    simulation = simulation_with(project, 10)
    queue = queue_create(
        project=project, name="Twice", annotators=[owner, bob], annotators_per_item=2, scope={}
    )
    turns = list(simulation.turns.order_by("index"))
    for turn, (first, second) in zip(turns, VERDICTS, strict=True):
        services.annotation_save(turn=turn, user=owner, data={"verdict": first})
        services.annotation_save(turn=turn, user=bob, data={"verdict": second})
    for turn, (human, judge) in zip(turns, FORMAT_VS_JUDGE, strict=False):
        services.annotation_save(turn=turn, user=owner, data={"format": str(human)})
        JudgeScore.objects.create(simulated_turn=turn, format=judge, mean_score=judge)

    page = signed_in.get(f"/traces/queues/{queue.pk}/").content.decode()

    assert "<td>alice – bob</td><td>0.40</td><td>10</td>" in page
    assert 'Krippendorff\'s α = <strong>0.42</strong> <span class="muted">(n = 10 items)' in page
    assert "<td>format</td><td>—</td><td>0</td><td>0.85</td><td>4</td>" in page
