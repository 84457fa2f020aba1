"""The Start episode button on scenario and world pages: editors only, and it posts to the
new-episode view, so the episode is bound to the page's scenario or world."""

from __future__ import annotations

import pytest

from studio.episodes.models import Episode

START_FORM = 'id="start-episode"'


@pytest.mark.parametrize("page", ["scenario", "world"])
def test_editors_see_the_button_and_viewers_do_not(page, people, scenario, client):
    url = {
        "scenario": f"/worlds/scenarios/{scenario.pk}/",
        "world": f"/worlds/{scenario.world.pk}/",
    }[page]
    value = {"scenario": f"scenario:{scenario.pk}", "world": f"world:{scenario.world.pk}"}[page]

    client.force_login(people.users["editor"])
    editor_html = client.get(url).content.decode()
    client.force_login(people.users["viewer"])
    viewer_html = client.get(url).content.decode()

    assert START_FORM in editor_html and 'action="/episodes/new/"' in editor_html
    assert f'name="start" value="{value}"' in editor_html
    assert 'name="csrfmiddlewaretoken"' in editor_html
    assert '<option value="llm">LLM policy</option>' in editor_html
    assert START_FORM not in viewer_html


def test_starting_from_the_scenario_page_binds_the_episode_and_opens_it(people, scenario, client):
    client.force_login(people.users["editor"])

    response = client.post(
        "/episodes/new/",
        {
            "project": "alpha",
            "start": f"scenario:{scenario.pk}",
            "agent_kind": "scripted",
            "agent_actions": "click('1')",
        },
    )

    episode = Episode.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/episodes/{episode.pk}/"
    assert episode.scenario == scenario and episode.world_revision == scenario.world_revision
    assert episode.agent == {"kind": "scripted", "actions": ["click('1')"]}
    assert episode.created_by == people.users["editor"]


def test_a_viewer_cannot_start_one(people, scenario, client):
    client.force_login(people.users["viewer"])

    named = client.post("/episodes/new/", {"project": "alpha", "start": f"scenario:{scenario.pk}"})
    # A viewer of a single project must not get in through the form's default project either.
    implied = client.post("/episodes/new/", {"start": f"scenario:{scenario.pk}"})

    assert named.status_code == 403 and implied.status_code == 403
    assert not Episode.objects.exists()


def test_an_archived_scenario_offers_no_start(people, scenario, client):
    scenario.archived = True
    scenario.save()
    client.force_login(people.users["editor"])

    assert START_FORM not in client.get(f"/worlds/scenarios/{scenario.pk}/").content.decode()
