"""A batch rollout started from the form in Chromium, watched to the end on its progress page.

Set WORLD_STUDIO_DOCS_SCREENSHOTS=1 to refresh docs/img/rollout-progress.png from this run.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import USERNAME, docs_screenshot
from tests.integration.stack import Stack

pytestmark = pytest.mark.e2e

SHOP = (
    "<html><body><header>Acme Outdoor · Cart ({n})</header><h2>Tents</h2>"
    "<div bid='21'>Ridge 2P · 1.9 kg · $249 <button bid='22'>Add to cart</button></div>"
    "</body></html>"
)


@pytest.fixture(scope="module")
def shop_scenario(studio: Stack) -> None:
    """A web scenario in a project of its own, a replay world model that answers its two
    turns, and an LLM agent endpoint (a replay too) that always clicks 'Add to cart': every
    model the rollout calls answers at once, so the test waits on nothing slow."""
    world_model = [SHOP.format(n=1), SHOP.format(n=2)]
    # The replay wraps its answer in observation tags; on a line of its own the action is
    # what the web domain reads from the agent's answer.
    agent = ["\nclick('22')\n"]
    studio.shell(
        "from django.contrib.auth import get_user_model\n"
        "from studio.core.models import Membership, ModelEndpoint, Project\n"
        "from studio.worlds.services import scenario_create, world_create\n"
        f"u = get_user_model().objects.get(username={USERNAME!r})\n"
        "p = Project.objects.create(name='E2E rollouts', slug='e2e-rollouts')\n"
        "Membership.objects.create(project=p, user=u, role='owner')\n"
        "w = world_create(project=p, user=u, spec={'domain': 'web', 'title': 'Acme Outdoor',"
        f" 'initial_observation': {SHOP.format(n=0)!r}}})\n"
        "scenario_create(world=w, title='Buy a tent', user=u)\n"
        "ModelEndpoint.objects.create(project=p, name='Shop replay', kind='replay',"
        f" config={{'observations': {json.dumps(world_model)}}})\n"
        "ModelEndpoint.objects.create(project=p, name='Clicking agent', kind='replay',"
        f" config={{'observations': {json.dumps(agent)}}})\n"
    )


def test_a_rollout_started_from_the_form_reaches_100_percent_live(
    signed_in_page: Page, shop_scenario: None
):
    page = signed_in_page
    page.click("nav >> text=Rollouts")
    page.select_option("#id_scenario", label="Buy a tent")
    page.select_option("#id_endpoint", label="Shop replay (replay)")
    page.fill("#id_episodes", "2")
    page.fill("#id_max_steps", "2")
    page.select_option("#id_policy", "llm")
    page.select_option("#id_agent_endpoint", label="Clicking agent (replay)")
    page.click("text=Start rollouts")

    page.wait_for_url("**/rollouts/*/")
    expect(page.locator("h1")).to_have_text("Buy a tent × 2")
    progress = page.locator("#rollout-progress")
    expect(progress).to_have_attribute("data-percent", "100")
    expect(progress).to_have_attribute("data-status", "done")
    expect(page.locator("#progress-percent")).to_have_text("100%")
    expect(page.locator("#progress-bar")).to_have_attribute("aria-valuenow", "2")
    expect(page.locator("#count-done")).to_have_text("2")
    expect(page.locator("#throughput")).to_contain_text("episodes/min")
    for index in (0, 1):
        row = page.locator(f"#rollout-row-{index}")
        expect(row).to_have_attribute("data-status", "done")
        expect(row).to_contain_text("2 / 2")
        expect(row).to_contain_text("truncated")
        expect(row.locator("a")).to_have_text(f"Buy a tent × 2 #{index}")
    docs_screenshot(page, "rollout-progress.png")

    page.locator("#rollout-row-1 a").click()
    expect(page.locator("#step-2")).to_have_attribute("data-status", "done")
    expect(page.locator("#step-2")).to_contain_text("click('22')")
