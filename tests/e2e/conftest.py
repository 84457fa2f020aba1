"""End-to-end fixtures: the studio as `make run` starts it, driven by headless Chromium."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.integration.stack import Stack, embedded_studio

# A loaded 2-core CI machine can take seconds to answer an htmx request; Playwright's
# 5 s default for expect() made tests flaky there.
expect.set_options(timeout=15_000)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
USERNAME, PASSWORD = "e2e-researcher", "e2e-pass-7f3k9q"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Playwright's sync API keeps an event loop running in the main thread while it is
    open, which breaks asyncio.run in any later test: so it lives for one module only."""
    if not shutil.which("chromium") and not os.path.exists(CHROMIUM):
        pytest.fail("Debian's chromium is not installed (make test installs it)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def studio() -> Iterator[Stack]:
    """One embedded studio (SQLite, in-process tasks, embedded model) for the e2e session."""
    with embedded_studio() as running:
        running.shell(
            "from django.contrib.auth import get_user_model; "
            "from studio.core.models import Project, Membership; "
            f"u = get_user_model().objects.create_user({USERNAME!r}, '', {PASSWORD!r}); "
            "p = Project.objects.create(name='E2E', slug='e2e'); "
            "Membership.objects.create(project=p, user=u, role='owner')"
        )
        yield running


@pytest.fixture
def page(browser: Browser, studio: Stack) -> Iterator[Page]:
    context = browser.new_context(base_url=studio.base_url, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


@pytest.fixture
def signed_in_page(page: Page) -> Page:
    page.goto("/login/")
    page.fill("input[name=username]", USERNAME)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/")
    return page


DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


def docs_screenshot(page: Page, name: str, *, full_page: bool = True) -> None:
    """Take a screenshot for docs/img/; it replaces the committed one only when
    WORLD_STUDIO_DOCS_SCREENSHOTS=1, so a test run leaves the tree clean."""
    refresh = os.environ.get("WORLD_STUDIO_DOCS_SCREENSHOTS")
    target = DOCS_IMG if refresh else Path(tempfile.gettempdir())
    page.screenshot(path=str(target / name), full_page=full_page)


def htmx_settled(page: Page) -> None:
    """Wait until htmx has finished swapping and processing new content: an event fired
    at an element htmx has not processed yet would be lost (a race no person can win)."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')"
    )
