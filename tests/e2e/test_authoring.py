"""Authoring in the browser: a web world with a live sandboxed preview, then a scenario.

Set WORLD_STUDIO_DOCS_SCREENSHOTS=1 to refresh docs/img/world-editor.png and
docs/img/scenario-editor.png from this run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import htmx_settled

pytestmark = pytest.mark.e2e

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"

SHOP = """<!DOCTYPE html>
<html><head><title>Thistle &amp; Quill</title>
<style>body{font-family:Georgia,serif;margin:0;background:#f7f3ea}header{background:#4a3b6b;color:#fff;padding:12px 20px}
main{padding:16px 20px}.item{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px;margin:8px 0}</style></head>
<body><header><h1>Thistle &amp; Quill</h1><p>Fictional stationery since 1893</p></header>
<main><div class="item"><h2>Marbled notebook</h2><p>12.50 ₲</p><button bid="5">Add to cart</button></div>
<div class="item"><h2>Heron fountain pen</h2><p>48.00 ₲</p><button bid="6">Add to cart</button></div></main>
</body></html>"""


def _shot(page: Page, name: str, tmp_path: Path, *, full_page: bool = True) -> None:
    target = DOCS_IMG if os.environ.get("WORLD_STUDIO_DOCS_SCREENSHOTS") else tmp_path
    target.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    # A viewport shot keeps the out-of-process sandboxed iframe painted.
    page.screenshot(path=str(target / name), full_page=full_page)


def test_it_authors_a_web_world_and_a_perturbed_scenario(signed_in_page: Page, tmp_path: Path):
    page = signed_in_page
    page.goto("/worlds/new/?project=e2e")
    page.check("input[name=domain][value=web]")
    page.fill("input[name=title]", "Thistle & Quill shop")
    page.click("button:has-text('Create world')")
    page.wait_for_url("**/worlds/*/")
    world_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    preview = page.frame_locator("iframe.observation")
    expect(preview.locator("h1")).to_have_text("Welcome")  # the starter page of revision 1

    # Typing re-renders the draft into the sandboxed iframe, before anything is saved.
    page.fill("textarea[name=initial_observation]", SHOP)
    expect(preview.locator("h1")).to_have_text("Thistle & Quill")
    page.fill("textarea[name=premise]", "A fictional stationery shop with a fictional currency.")
    page.click("button:has-text('Save revision')")
    expect(page.locator("#world-editor [role=status]")).to_have_text("Saved revision 2.")
    expect(page.locator("iframe.observation")).to_have_attribute(
        "src", f"/worlds/{world_id}/revisions/2/preview"
    )
    expect(preview.locator("h2").first).to_have_text("Marbled notebook")
    assert "allow-same-origin" not in (
        page.locator("iframe.observation").get_attribute("sandbox") or ""
    )
    _shot(page, "world-editor.png", tmp_path, full_page=False)

    page.click("text=New scenario")
    page.fill("input[name=title]", "Cookie banner, then a closing-time rush")
    page.click("button:has-text('Create scenario')")
    page.wait_for_url("**/worlds/scenarios/*/")

    page.fill("textarea[name=task]", "Buy the Heron fountain pen and reach the order confirmation.")
    page.click("button:has-text('Save task')")
    expect(page.locator("#scenario-basics [role=status]")).to_have_text("Saved.")

    page.select_option("select[name=kind]", "ui_interrupt")
    page.click("button:has-text('Add perturbation')")
    expect(page.locator("li.perturbation")).to_have_count(1)
    htmx_settled(page)
    page.select_option("#perturbation-0 select[name=param-style]", "cookie_banner")
    expect(page.locator("#perturbation-0 .pill.ok")).to_have_text("saved")

    page.select_option("select[name=kind]", "instruction")
    page.click("button:has-text('Add perturbation')")
    expect(page.locator("li.perturbation")).to_have_count(2)
    htmx_settled(page)
    page.fill(
        "#perturbation-1 input[name=param-text]",
        "The shop closes in five minutes; say so on every page.",
    )
    page.locator("#perturbation-1 input[name=param-text]").blur()
    expect(page.locator("#perturbation-1 .pill.ok")).to_have_text("saved")

    page.click("button:has-text('Preview prompt')")
    prompt = page.locator("#prompt-preview")
    expect(prompt).to_contain_text("tokens")
    expect(prompt).to_contain_text("estimate")
    expect(prompt).to_contain_text("The shop closes in five minutes")
    expect(prompt).to_contain_text("Buy the Heron fountain pen")
    expect(prompt).to_contain_text("Enforced after the model answers at step 1: #1 UI interrupt")
    _shot(page, "scenario-editor.png", tmp_path)
