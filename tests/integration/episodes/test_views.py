"""Episode pages, live-control views and the sandboxed render endpoint."""

from __future__ import annotations

import pytest
from django.test import Client

from simulator.domains import get_domain
from studio.core.models import Membership, Project
from studio.episodes import services
from studio.episodes.models import Episode
from studio.worlds.services import scenario_create, world_create
from tests.integration.episodes import helpers

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = "<script>document.title='pwned';top.location='about:blank';parent.document.cookie</script>"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_episode_page_shows_the_timeline_and_a_domain_composer():
    project, user = helpers.project_with()
    spec = {
        **helpers.TERMINAL_WORLD,
        "domain": "mcp",
        "initial_observation": "{}",
        "extras": {
            "tools": [
                {
                    "name": "get_order",
                    "description": "Look up an order",
                    "input_schema": {
                        "type": "object",
                        "properties": {
                            "order_id": {"type": "string"},
                            "verbose": {"type": "boolean"},
                        },
                        "required": ["order_id"],
                    },
                }
            ]
        },
    }
    episode = helpers.episode(project, user, spec=spec)

    html = _client(user).get(f"/episodes/{episode.pk}/").content.decode()

    assert f'ws-connect="/ws/episodes/{episode.pk}/"' in html
    assert 'id="composer" ws-send' in html
    assert 'name="arg__get_order__order_id"' in html and 'id="timeline"' in html
    assert (
        f'<iframe sandbox class="observation" src="/episodes/{episode.pk}/initial/render"' in html
    )


def test_validate_composes_the_tool_call_and_checks_its_schema():
    project, user = helpers.project_with()
    tools = [
        {
            "name": "get_order",
            "input_schema": {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
            },
        }
    ]
    episode = helpers.episode(
        project, user, spec={**helpers.TERMINAL_WORLD, "domain": "mcp", "extras": {"tools": tools}}
    )
    client = _client(user)

    ok = client.post(
        f"/episodes/{episode.pk}/validate", {"tool": "get_order", "arg__get_order__n": "7"}
    )
    bad = client.post(
        f"/episodes/{episode.pk}/validate", {"action": '{"name": "get_order", "arguments": {}}'}
    )

    assert "Valid:" in ok.content.decode() and "&quot;n&quot;: 7" in ok.content.decode()
    assert "do not match its input schema" in bad.content.decode()


def test_the_render_endpoint_serves_the_observation_under_a_sandbox_csp():
    project, user = helpers.project_with()
    spec = {**helpers.TERMINAL_WORLD, "domain": "web", "initial_observation": ""}
    model = helpers.replay_endpoint(project, [f"<html><body><h1>Shop</h1>{SCRIPT}</body></html>"])
    episode = helpers.episode(project, user, spec=spec, model=model)
    helpers.wait_for_step(services.step_submit(episode=episode, action="click('1')").pk)

    response = _client(user).get(f"/episodes/{episode.pk}/steps/1/render")

    assert response.status_code == 200
    assert response["Content-Security-Policy"] == (
        "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    )
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "Shop" in response.content.decode()
    page = _client(user).get(f"/episodes/{episode.pk}/").content.decode()
    assert "<script>document.title" not in page  # escaped on the page itself
    assert "allow-same-origin" not in page


def test_a_stranger_gets_404_from_every_episode_url():
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)
    _, stranger = helpers.project_with("mallory")
    client = _client(stranger)

    for url in (
        f"/episodes/{episode.pk}/",
        f"/episodes/{episode.pk}/initial/render",
        f"/episodes/{episode.pk}/steps/1/render",
    ):
        assert client.get(url).status_code == 404
    assert client.post(f"/episodes/{episode.pk}/close").status_code == 404
    assert episode.pk not in [e.pk for e in client.get("/episodes/").context["episodes"]]


def test_a_viewer_cannot_change_the_episode():
    project, owner = helpers.project_with()
    episode = helpers.episode(project, owner)
    from django.contrib.auth import get_user_model

    from studio.core.models import Membership

    viewer = get_user_model().objects.create_user("vic", "", "pw-12345678")
    Membership.objects.create(project=project, user=viewer, role="viewer")

    response = _client(viewer).post(f"/episodes/{episode.pk}/close")

    assert response.status_code == 403
    assert Episode.objects.get(pk=episode.pk).status == "active"


def test_perturbations_are_added_and_toggled_from_the_page():
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)
    client = _client(user)

    form = client.get(f"/episodes/{episode.pk}/perturbations/form", {"kind": "truncation"})
    added = client.post(
        f"/episodes/{episode.pk}/perturbations/add",
        {"kind": "truncation", "mode": "enforced", "param-max_chars": "40", "scope": "episode"},
    )
    toggled = client.post(f"/episodes/{episode.pk}/perturbations/0/toggle")

    assert 'name="param-max_chars"' in form.content.decode()
    assert "truncation" in added.content.decode()
    episode.refresh_from_db()
    assert episode.perturbations[0]["params"]["max_chars"] == 40
    assert episode.disabled_perturbations == [0] and "Turn on" in toggled.content.decode()
    assert services.active_perturbations(episode) == []


def test_the_list_filters_and_a_new_episode_starts_from_a_world():
    project, user = helpers.project_with()
    helpers.episode(project, user)
    web = helpers.episode(
        project, user, spec={**helpers.TERMINAL_WORLD, "domain": "web", "title": "Shop"}
    )
    client = _client(user)

    listed = client.get("/episodes/", {"domain": "web"}, headers={"HX-Request": "true"})
    world = web.world_revision.world
    created = client.post(
        "/episodes/new/",
        {
            "project": project.slug,
            "start": f"world:{world.pk}",
            "seed": "3",
            "agent_kind": "scripted",
            "agent_actions": "click('1')\ngo_back()",
        },
    )

    assert [e.pk for e in listed.context["episodes"]] == [web.pk]
    assert (
        'id="episode-table"' in listed.content.decode() and "<html" not in listed.content.decode()
    )
    episode = Episode.objects.order_by("-pk")[0]
    assert created.status_code == 302 and created["Location"] == f"/episodes/{episode.pk}/"
    assert episode.seed == 3 and episode.agent == {
        "kind": "scripted",
        "actions": ["click('1')", "go_back()"],
    }


def test_the_new_episode_form_groups_by_domain_with_scenarios_first():
    project, user = helpers.project_with()
    box = world_create(project=project, spec=helpers.TERMINAL_WORLD, user=user)
    shop = world_create(
        project=project,
        spec={**helpers.TERMINAL_WORLD, "domain": "web", "title": "Shop"},
        user=user,
    )
    fix = scenario_create(world=box, title="Fix the build")

    response = _client(user).get("/episodes/new/", {"scenario": fix.pk})
    html = response.content.decode()

    groups = response.context["start_groups"]
    assert [g["title"] for g in groups] == [get_domain("terminal").title, get_domain("web").title]
    assert [i["value"] for i in groups[0]["items"]] == [f"scenario:{fix.pk}", f"world:{box.pk}"]
    assert [i["value"] for i in groups[1]["items"]] == [f"world:{shop.pk}"]
    terminal = html.index(f'<optgroup label="{get_domain("terminal").title}">')
    assert (
        terminal
        < html.index(f'value="scenario:{fix.pk}" selected')
        < html.index(f'value="world:{box.pk}"')
    )
    assert f'value="world:{box.pk}" selected' not in html


def test_the_new_episode_form_preselects_a_world_and_finds_its_project():
    project, user = helpers.project_with()
    helpers.project_with("bob")
    Membership.objects.create(project=Project.objects.get(slug="p-bob"), user=user, role="owner")
    shop = world_create(
        project=project, spec={**helpers.TERMINAL_WORLD, "title": "<b>Shop</b>"}, user=user
    )

    response = _client(user).get("/episodes/new/", {"world": shop.pk})

    html = response.content.decode()
    assert response.context["project"] == project
    assert f'<option value="world:{shop.pk}" selected>&lt;b&gt;Shop&lt;/b&gt; (world)' in html


def test_forks_show_side_by_side():
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, model=helpers.replay_endpoint(project, ["a", "b"]))
    helpers.wait_for_step(services.step_submit(episode=episode, action="echo a").pk)
    client = _client(user)

    response = client.post(f"/episodes/{episode.pk}/fork", {"at": "1"})
    fork = Episode.objects.get(parent=episode)
    compare = client.get("/episodes/compare/", {"a": episode.pk, "b": fork.pk}).content.decode()

    assert response["Location"] == f"/episodes/{fork.pk}/"
    assert compare.count('class="compare-column"') == 2
    assert f"/episodes/{fork.pk}/steps/1/render" in compare


def test_render_frames_load_from_the_render_origin_when_one_is_set(settings):
    settings.STUDIO_RENDER_ORIGIN = "https://render.studio.example"
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, spec={**helpers.TERMINAL_WORLD, "domain": "web"})

    html = _client(user).get(f"/episodes/{episode.pk}/").content.decode()

    assert (
        '<iframe sandbox class="observation" '
        f'src="https://render.studio.example/episodes/{episode.pk}/initial/render"'
    ) in html
