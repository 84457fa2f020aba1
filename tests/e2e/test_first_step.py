"""A newcomer's first step, as issue 17 tried it: `make run`, sign in with
var/first-login.txt, start the Sandbox's web scenario from its own page, send
`click('6')`, and the embedded model's step finishes (benchmarks/first_step.py
reports how long it takes; a test does not)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import docs_screenshot
from tests.integration.stack import Stack, embedded_studio

SCENARIO = "Cookie banner on arrival"
#: Generous caps so a shared 2-core box never fails the test; they bound a hang, not a speed.
MODEL_LOAD_MS = 300_000
STEP_MS = 300_000


@pytest.fixture(scope="module")
def newcomer_studio() -> Iterator[Stack]:
    """A studio started as `make run` starts it: migrate, bootstrap, uvicorn (model preload on)."""
    with embedded_studio(extra_env={"STUDIO_PRELOAD_MODEL": "1"}) as running:
        running.manage("bootstrap")
        yield running


def first_login(studio: Stack) -> tuple[str, str]:
    text = (studio.var_dir / "first-login.txt").read_text()
    fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    return fields["username"], fields["password"]


def test_a_newcomer_starts_the_web_scenario_and_its_first_step_finishes(
    browser: Browser, newcomer_studio: Stack
):
    context = browser.new_context(base_url=newcomer_studio.base_url)
    page: Page = context.new_page()
    username, password = first_login(newcomer_studio)
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url("**/")

    # The studio loaded the model at startup; the status page says how that went.
    page.goto("/status/")
    expect(page.locator("#model-state")).to_have_attribute(
        "data-phase", re.compile("loading|ready")
    )
    expect(page.locator("#model-state")).to_have_attribute(
        "data-phase", "ready", timeout=MODEL_LOAD_MS
    )

    page.goto("/worlds/scenarios/")
    page.get_by_role("link", name=SCENARIO).first.click()
    expect(page.locator("h1")).to_contain_text(SCENARIO)
    page.locator("#start-episode button.primary").click()
    page.wait_for_url(re.compile(r"/episodes/\d+/$"))
    expect(page.locator("#model-state")).to_have_attribute("data-phase", "ready")

    expect(page.locator("#send-action")).to_be_enabled()
    page.fill("#action-text", "click('6')")
    page.click("#send-action")

    done = page.locator("#step-1[data-status='done']")
    expect(done).to_be_visible(timeout=STEP_MS)
    expect(done.locator("iframe.observation")).to_have_attribute("sandbox", "")
    expect(done.locator(".demo-model-note a")).to_have_attribute("href", "/docs/sglang.md")
    # The observation renders in its sandboxed frame (here with the scenario's cookie banner).
    expect(done.frame_locator("iframe.observation").locator("body")).not_to_be_empty()
    # A viewport shot: Chromium's full-page capture drops fixed content inside frames.
    page.set_viewport_size({"width": 1280, "height": 1560})
    docs_screenshot(page, "first-step-embedded.png", full_page=False)
    page.goto("/docs/sglang.md")
    expect(page.locator("pre.doc")).to_contain_text("SGLang")
    context.close()
