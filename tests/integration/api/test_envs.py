from __future__ import annotations

import json

import pytest

from studio.api.ratelimit import memory_buckets
from studio.core.models import Membership
from studio.episodes.models import Episode, Step
from tests.integration.api.factories import make_project, make_scenario, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def post(api, url, data):
    return api.post(url, json.dumps(data), content_type="application/json")


def test_it_lists_the_scenarios_the_user_can_see(api, scenario):
    other = make_project(make_user("bob"), slug="other")
    make_scenario(other, title="Hidden")

    data = api.get("/api/v1/scenarios").json()

    assert [s["id"] for s in data["scenarios"]] == [scenario.pk]
    assert data["scenarios"][0]["model"] == f"scenario-{scenario.pk}"


def test_an_episode_runs_to_termination(api, scenario, world_model):
    created = post(api, "/api/v1/envs", {"scenario": scenario.pk, "seed": 7})
    env = created.json()

    first = post(api, f"/api/v1/envs/{env['id']}/step", {"action": "make"}).json()
    last = post(api, f"/api/v1/envs/{env['id']}/step", {"action": "echo BUILD OK"}).json()
    after = post(api, f"/api/v1/envs/{env['id']}/step", {"action": "ls"})

    assert created.status_code == 201
    assert env["observation"] == "user@box:~$ " and env["info"]["seed"] == 7
    assert "make" in first["observation"] and first["reward"] == 0.0
    assert first["terminated"] is False and first["info"]["step"] == 1
    assert last["terminated"] is True and last["reward"] == 1.0
    assert after.status_code == 409 and after.json()["error"]["code"] == "episode_closed"
    episode = Episode.objects.get(pk=env["id"])
    assert episode.source == "api" and episode.seed == 7
    assert list(Step.objects.filter(episode=episode).values_list("index", flat=True)) == [1, 2]
    state = api.get(f"/api/v1/envs/{env['id']}").json()
    assert state["steps"] == 2 and state["terminated"] is True


def test_it_truncates_at_the_step_limit(api, project, world_model):
    scenario = make_scenario(project, max_steps=1)
    env = post(api, "/api/v1/envs", {"scenario": scenario.pk}).json()

    result = post(api, f"/api/v1/envs/{env['id']}/step", {"action": "make"}).json()

    assert result["truncated"] is True and result["terminated"] is False


def test_an_invalid_action_is_a_422_with_the_domains_message(api, scenario, world_model):
    env = post(api, "/api/v1/envs", {"scenario": scenario.pk}).json()

    response = post(api, f"/api/v1/envs/{env['id']}/step", {"action": "   "})

    assert response.status_code == 422
    assert response.json()["error"] == {"code": "invalid_action", "message": "the action is empty"}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, "invalid_json"),
        (b"[1, 2]", 400, "invalid_request"),
        (b'{"scenario": "1"}', 400, "invalid_request"),
        (b'{"scenario": true}', 400, "invalid_request"),
        (b'{"scenario": 99999999999999999999999}', 400, "invalid_request"),
        (b'{"scenario": 424242}', 404, "not_found"),
        (b'{"scenario": 1, "seed": 1e3}', 400, "invalid_request"),
    ],
)
def test_bad_input_gets_a_json_4xx(api, scenario, body, status, code):
    response = api.post("/api/v1/envs", body, content_type="application/json")

    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_another_projects_env_is_not_found_and_a_viewer_cannot_step(api, alice, world_model):
    bob = make_user("bob")
    foreign = make_scenario(make_project(bob, slug="bobs"))
    shared = make_project(bob, slug="shared")
    Membership.objects.create(project=shared, user=alice, role="viewer")
    viewable = make_scenario(shared)

    foreign_create = post(api, "/api/v1/envs", {"scenario": foreign.pk})
    viewer_create = post(api, "/api/v1/envs", {"scenario": viewable.pk})
    from studio.episodes.services import episode_create

    episode = episode_create(project=shared, user=bob, scenario=viewable)
    viewer_read = api.get(f"/api/v1/envs/{episode.pk}")
    viewer_step = post(api, f"/api/v1/envs/{episode.pk}/step", {"action": "ls"})

    assert foreign_create.status_code == 404
    assert viewer_create.status_code == 403 and viewer_create.json()["error"]["code"] == "forbidden"
    assert viewer_read.status_code == 200
    assert viewer_step.status_code == 403
    assert api.get("/api/v1/envs/99999999999999999999").status_code == 404


def test_a_body_over_the_limit_is_a_413(api, scenario, settings):
    settings.API_MAX_REQUEST_BYTES = 100

    response = post(api, "/api/v1/envs", {"scenario": scenario.pk, "pad": "x" * 200})

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"


def test_a_token_over_its_rate_gets_429_with_retry_after(api, scenario, settings):
    settings.API_RATE_PER_S = 0.5
    settings.API_RATE_BURST = 2
    memory_buckets.clear()

    statuses = [api.get("/api/v1/scenarios").status_code for _ in range(3)]
    limited = api.get("/api/v1/scenarios")

    assert statuses[:2] == [200, 200] and statuses[2] == 429
    assert limited.status_code == 429 and int(limited["Retry-After"]) >= 1
    assert limited.json()["error"]["code"] == "rate_limited"


def test_close_ends_the_episode(api, scenario, world_model):
    env = post(api, "/api/v1/envs", {"scenario": scenario.pk}).json()

    closed = post(api, f"/api/v1/envs/{env['id']}/close", {})

    assert closed.json() == {"id": env["id"], "status": "closed"}
    assert post(api, f"/api/v1/envs/{env['id']}/step", {"action": "ls"}).status_code == 409


def test_nul_characters_are_refused_not_crashed_on(api, scenario, world_model):
    env = post(api, "/api/v1/envs", {"scenario": scenario.pk}).json()

    response = post(api, f"/api/v1/envs/{env['id']}/step", {"action": "ls\u0000"})

    assert response.status_code == 400


def test_a_services_refusal_is_a_json_error_with_its_status_and_code(api, project):
    """A StudioError no view translated still answers as JSON, never a 500 page."""
    broken = make_scenario(project, title="No actions", policy={"kind": "scripted"})

    response = post(api, "/api/v1/envs", {"scenario": broken.pk})

    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid_request",
        "message": "a scripted agent needs a list of actions",
    }
    assert not Episode.objects.exists()
