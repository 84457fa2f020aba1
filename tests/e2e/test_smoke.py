from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def test_it_signs_in_and_shows_the_status_page(signed_in_page: Page):
    page = signed_in_page
    expect(page.locator("h1")).to_have_text("Your projects")
    expect(page.get_by_role("heading", name="E2E", exact=True)).to_be_visible()

    page.click("text=Status")

    expect(page.locator("#health")).to_contain_text("Channel layer")
    expect(page.locator("#health")).to_contain_text("sqlite")


def test_the_pipeline_check_answers_over_the_websocket(signed_in_page: Page):
    page = signed_in_page
    page.goto("/status/")

    page.click("#pipeline-check")

    expect(page.locator("#pipeline-result")).to_contain_text("Round trip through in-process task")


def test_a_wrong_password_is_refused(page: Page):
    page.goto("/login/")
    page.fill("input[name=username]", "e2e-researcher")
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")

    expect(page.locator(".error")).to_contain_text("didn't match")
