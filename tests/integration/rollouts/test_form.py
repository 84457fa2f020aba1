"""The new-rollout form: its start and endpoint pickers, and the jobs they start."""

from __future__ import annotations

import pytest

from simulator.domains import get_domain
from studio.core.models import ModelEndpoint
from studio.rollouts.models import RolloutJob
from studio.worlds.services import scenario_create, world_create
from tests.integration.api.factories import make_project, make_scenario, make_user
from tests.integration.rollouts.test_rollouts import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

SHOP = "<html><body><h1>Acme</h1><button bid='12'>Add to cart</button></body></html>"


@pytest.fixture
def lab(db):
    user = make_user("alice")
    return user, make_project(user)


def _replay(project, name: str, observations: list[str]) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        project=project, name=name, kind="replay", config={"observations": observations}
    )


def test_it_groups_starts_by_domain_and_lists_only_usable_endpoints(client, lab):
    user, project = lab
    box = world_create(
        project=project,
        spec={"domain": "terminal", "title": "Box", "initial_observation": "$ "},
        user=user,
    )
    shop = world_create(
        project=project,
        spec={"domain": "web", "title": "Shop", "initial_observation": SHOP},
        user=user,
    )
    fix = scenario_create(world=box, title="Fix the build")
    _replay(project, "lab-replay", ["ok"])
    ModelEndpoint.objects.create(name="site-sglang", kind="openai", base_url="http://gpu:30000")
    _replay(make_project(make_user("bob"), slug="other"), "bobs-secret", ["ok"])
    client.force_login(user)

    html = client.get("/rollouts/").content.decode()

    terminal = html.index(f'<optgroup label="{get_domain("terminal").title}">')
    web = html.index(f'<optgroup label="{get_domain("web").title}">')
    assert (
        terminal < html.index(f'value="scenario:{fix.pk}"') < html.index(f'value="world:{box.pk}"')
    )
    assert web < html.index(f'value="world:{shop.pk}"')
    assert html.index('<optgroup label="Lab">') < html.index('<optgroup label="Site-wide">')
    assert '<option value="lab-replay">lab-replay (replay)</option>' in html
    assert '<option value="site-sglang">site-sglang (openai)</option>' in html
    assert "bobs-secret" not in html


def test_an_llm_rollout_uses_the_picked_agent_and_world_model(client, lab):
    user, project = lab
    shop = world_create(
        project=project,
        spec={"domain": "web", "title": "Shop", "initial_observation": SHOP},
        user=user,
    )
    world_model = _replay(project, "shop-replay", [SHOP, SHOP])
    # The replay wraps its answer in observation tags; on a line of its own the action is
    # still the first part of the answer the web domain reads as one.
    _replay(project, "clicker", ["\nclick('12')\n"])
    client.force_login(user)

    response = client.post(
        "/rollouts/",
        {"scenario": f"world:{shop.pk}", "endpoint": world_model.pk, "episodes": 1,
         "max_steps": 2, "base_seed": 0, "policy": "llm", "agent_endpoint": "clicker"},
    )  # fmt: skip
    job = wait_for(RolloutJob.objects.get(), "done")
    episode = job.rows.get().episode

    assert response.status_code == 302
    assert (job.scenario, job.world_revision) == (None, shop.head)
    assert job.policy == {"kind": "llm", "endpoint": "clicker"}
    assert job.title == "Shop × 1"
    assert episode is not None and episode.endpoint == world_model
    assert list(episode.steps.values_list("action", flat=True)) == ["click('12')"] * 2
    assert job.rows.get().outcome == "truncated"


def test_it_refuses_an_endpoint_of_another_project_and_starts_nothing(client, lab):
    user, project = lab
    scenario = make_scenario(project)
    other = make_project(user, slug="other")
    theirs = _replay(other, "theirs", ["ok"])
    client.force_login(user)

    response = client.post(
        "/rollouts/",
        {"scenario": f"scenario:{scenario.pk}", "endpoint": theirs.pk, "episodes": 1,
         "max_steps": 1, "base_seed": 0, "policy": "llm", "agent_endpoint": "theirs"},
    )  # fmt: skip

    assert response.status_code == 200
    assert set(response.context["form"].errors) == {"endpoint", "agent_endpoint"}
    assert not RolloutJob.objects.exists()


def test_it_refuses_an_agent_endpoint_name_that_no_endpoint_has(client, lab):
    user, project = lab
    scenario = make_scenario(project)
    client.force_login(user)

    response = client.post(
        "/rollouts/",
        {"scenario": scenario.pk, "episodes": 1, "max_steps": 1, "base_seed": 0,
         "policy": "llm", "agent_endpoint": "typo-model"},
    )  # fmt: skip

    assert response.status_code == 200
    assert "agent_endpoint" in response.context["form"].errors
    assert not RolloutJob.objects.exists()
