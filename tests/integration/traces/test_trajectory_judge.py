"""The trajectory judge through an OpenAI-compatible server, stored and shown on the review page."""

from __future__ import annotations

import pytest

from simulator.serve import ServerOptions
from simulator.serve.threaded import start_server_in_thread
from studio.traces import trajectory_judging
from studio.traces.models import Simulation
from tests.integration.traces.simulations import imported_trace, judge_endpoint, simulate

pytestmark = pytest.mark.django_db

ANSWER = """<think>turn 1 says /srv, turn 3 says /app</think>
<trajectory_evaluation>
```json
{"issues": [{"turn": 3, "earlier_turn": 1, "dimension": "state_tracking",
             "description": "the prompt shows /app again <script>alert(1)</script>"}],
 "summary": "Loses the working directory.",
 "scores": {"state_tracking": 2, "consistency": 3, "causality": 9, "fidelity": 3}}
```
</trajectory_evaluation>"""


@pytest.fixture
def simulation(project, fixtures_dir):
    trace = imported_trace(project, fixtures_dir)
    return simulate(trace, ["root@host:/srv# ", "cd: no such dir", "root@host:/app# "])


def test_it_asks_once_with_every_turn_and_stores_the_verdict(simulation):
    with start_server_in_thread(ServerOptions(replay=[ANSWER])) as server:
        endpoint = judge_endpoint(simulation.project, server.base_url)
        trajectory_judging.trajectory_judge_run(
            simulation_id=simulation.pk, endpoint_id=endpoint.pk
        )
        bodies = list(server.state.requests)
    assert len(bodies) == 1  # one request for the whole trajectory
    user = bodies[0]["messages"][1]["content"]
    for turn in simulation.turns.select_related("turn"):
        assert f"## Turn {turn.index}" in user
        assert turn.observation in user and turn.turn.observation in user
    stored = Simulation.objects.get(pk=simulation.pk).trajectory_judgement
    assert stored["success"] and stored["turns"] == 3
    assert stored["scores"] == {
        "state_tracking": 2,
        "consistency": 3,
        "causality": 5,
        "fidelity": 3,
    }
    assert stored["normalized"] == 56.25
    assert stored["notes"] == ["causality: 9 is above 5, read as 5"]
    assert stored["issues"][0]["turn"] == 3 and stored["issues"][0]["earlier_turn"] == 1
    assert stored["judge_endpoint"].endswith("(judge)")


def test_the_review_page_shows_the_verdict_escaped_with_links_to_turns(signed_in, simulation):
    page = signed_in.get(f"/traces/simulations/{simulation.pk}/").content.decode()
    assert 'id="trajectory-judge"' in page and "Not judged yet" in page
    assert 'id="judge-trajectory"' in page
    with start_server_in_thread(ServerOptions(replay=[ANSWER])) as server:
        endpoint = judge_endpoint(simulation.project, server.base_url)
        trajectory_judging.trajectory_judge_run(
            simulation_id=simulation.pk, endpoint_id=endpoint.pk
        )
    page = signed_in.get(f"/traces/simulations/{simulation.pk}/").content.decode()
    assert '<strong id="trajectory-total">56.3</strong>' in page
    assert "Loses the working directory." in page
    assert '<a href="?turn=3">turn 3</a>' in page and "(against turn 1)" in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "causality: 9 is above 5, read as 5" in page


def test_an_unreadable_answer_is_stored_as_a_failure_and_said_so(signed_in, simulation):
    with start_server_in_thread(ServerOptions(replay=["I would rather not say."])) as server:
        endpoint = judge_endpoint(simulation.project, server.base_url)
        trajectory_judging.trajectory_judge_run(
            simulation_id=simulation.pk, endpoint_id=endpoint.pk
        )
        assert len(server.state.requests) == 3  # asked again, up to the three attempts
    stored = Simulation.objects.get(pk=simulation.pk).trajectory_judgement
    assert not stored["success"] and stored["error"] == "no JSON object found"
    page = signed_in.get(f"/traces/simulations/{simulation.pk}/").content.decode()
    assert "answer could not be read: no JSON object found" in page


def test_the_judge_trajectory_button_refuses_viewers_and_foreign_endpoints(
    client, signed_in, simulation
):
    from django.contrib.auth import get_user_model

    from studio.core.models import Membership, ModelEndpoint, Project

    other = Project.objects.create(name="Other", slug="other")
    foreign = ModelEndpoint.objects.create(project=other, name="x", kind="openai", model="m")
    url = f"/traces/simulations/{simulation.pk}/judge-trajectory/"
    assert signed_in.post(url, {"endpoint": foreign.pk}).status_code == 404
    viewer = get_user_model().objects.create_user("vera", "", "pw-vera-12345")
    Membership.objects.create(project=simulation.project, user=viewer, role="viewer")
    client.force_login(viewer)
    assert client.post(url).status_code in (403, 404)
