from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import USERNAME, docs_screenshot

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def episodes(studio):
    """Episodes in a project of their own: other e2e modules add episodes to 'e2e'."""
    studio.shell(
        "from tests.integration.exports.conftest import make_episode; "
        "from django.contrib.auth import get_user_model; "
        "from studio.core.models import Membership, Project; "
        "p = Project.objects.create(name='E2E exports', slug='e2e-exports'); "
        f"Membership.objects.create(project=p, user=get_user_model().objects.get(username={USERNAME!r}), role='owner'); "
        "make_episode(p, domain='terminal', steps=4, title='Flaky CI build'); "
        "make_episode(p, domain='terminal', steps=2, title='Disk full'); "
        "make_episode(p, domain='mcp', steps=2, with_scenario=False, title='Calendar tools')"
    )


def test_it_collects_a_filtered_list_and_downloads_an_export(signed_in_page: Page, episodes):
    page = signed_in_page
    page.goto("/collections/browse/?project=e2e-exports")
    page.select_option("select[name=domain]", "terminal")
    expect(page.locator("#match-count")).to_have_text("2 matching episodes")
    docs_screenshot(page, "collections-browse.png")

    page.fill("input[name=new_name]", "Terminal failures")
    page.click("#add-all")

    expect(page.locator("h1")).to_have_text("Terminal failures")
    expect(page.locator("#item-counts")).to_contain_text("2 episodes")
    expect(page.locator("#collection-filters")).to_contain_text("domain=terminal")
    docs_screenshot(page, "collections-detail.png")

    page.select_option("select[name=format]", "awb")
    with page.expect_download() as info:
        page.click("#export-button")
    download = info.value
    rows = [json.loads(line) for line in Path(download.path()).read_text().splitlines()]

    assert download.suggested_filename == "Terminal-failures-awb.jsonl"
    assert [r["turn_idx"] for r in rows] == [1, 2, 3, 4, 1, 2]  # oldest episode first
    assert {r["task"] for r in rows} == {"agentworld/terminal"}
    assert len(rows[3]["response"][-1]) > 100_000  # the long observation, streamed whole


def test_a_dataset_export_shows_live_progress_and_a_download_link(signed_in_page: Page, episodes):
    page = signed_in_page
    page.goto("/collections/browse/?project=e2e-exports")
    page.fill("input[name=new_name]", "Everything")
    page.click("#add-all")
    expect(page.locator("#item-counts")).to_contain_text("3 episodes")

    page.select_option("select[name=format]", "trajectory")
    page.select_option("select[name=layout]", "hf")
    page.check("input[name=parquet]")
    page.click("#export-button")

    expect(page.locator("#export-progress")).to_contain_text("Done")
    expect(page.locator("#export-download")).to_be_visible()
    docs_screenshot(page, "collections-export.png")
    with page.expect_download() as info:
        page.click("#export-download")
    assert info.value.suggested_filename == "Everything-trajectory.zip"
