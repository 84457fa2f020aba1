"""Episodes in headless Chromium: streamed text, rendered observations, a hostile page."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.integration.stack import ROOT, Stack, free_port, wait_until

pytestmark = pytest.mark.e2e

HOSTILE = (
    "<html><head><title>Shop</title></head><body><h1>Acme Shop</h1>"
    "<p>[12] button 'Add to cart'</p>"
    "<script>document.title='pwned';top.location='about:blank';parent.document.cookie</script>"
    "<p>Free shipping on orders over $50. Three items in stock.</p></body></html>"
)


@pytest.fixture(scope="module")
def slow_model() -> Iterator[str]:
    """The protocol test server replaying a hostile page, a few tokens a second."""
    replay = Path(tempfile.mkdtemp()) / "replay.jsonl"
    replay.write_text(
        "\n".join(
            json.dumps({"observation": o}) for o in (HOSTILE, HOSTILE.replace("Acme", "Other"))
        )
    )
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "simulator.serve", "--port", str(port), "--replay", str(replay),
         "--tokens-per-s", "25", "--latency-ms", "200"],
        cwd=ROOT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        try:
            return httpx.get(f"{url}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, 30, "the protocol test server")
        yield url
    finally:
        server.terminate()
        server.wait(10)


def _web_episode(studio: Stack, model_url: str) -> int:
    out = studio.shell(
        "from django.contrib.auth import get_user_model\n"
        "from studio.core.models import Project, ModelEndpoint\n"
        "from studio.worlds.services import world_create\n"
        "from studio.episodes.services import episode_create\n"
        "p = Project.objects.get(slug='e2e')\n"
        "u = get_user_model().objects.get(username='e2e-researcher')\n"
        "w = world_create(project=p, user=u, spec={'domain': 'web', 'title': 'Acme shop',"
        " 'initial_observation': \"[12] button 'Add to cart'\"})\n"
        f"m = ModelEndpoint.objects.create(project=p, name='slow-{free_port()}', kind='openai',"
        f" base_url={model_url!r}, model='world-studio-test', config={{'max_retries': 0}})\n"
        "e = episode_create(project=p, user=u, world_revision=w.head, endpoint=m)\n"
        "print(e.pk)\n"
    )
    return int(out.strip().splitlines()[-1])


def test_an_action_streams_then_renders_in_a_sandboxed_iframe(
    signed_in_page: Page, studio: Stack, slow_model: str
):
    page = signed_in_page
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    episode = _web_episode(studio, slow_model)
    page.goto(f"/episodes/{episode}/")
    title, url = page.title(), page.url
    expect(page.locator("#send-action")).to_be_enabled()
    expect(page.locator("#composer-elements option[value='12']")).to_have_count(1)

    page.fill("#action-text", "click('12')")
    page.click("#send-action")

    running = page.locator("#step-1[data-status='running'] #step-1-observation")
    expect(running).to_contain_text("Acme Shop", timeout=30_000)  # streamed, not yet done
    frame = page.locator("#step-1[data-status='done'] iframe.observation")
    expect(frame).to_be_visible(timeout=30_000)
    assert frame.get_attribute("sandbox") == ""
    expect(page.frame_locator("#step-1 iframe.observation").locator("h1")).to_have_text("Acme Shop")
    expect(page.locator("#step-1 .telemetry")).to_contain_text("tokens")
    # Model text outside the iframe is text: the script shows as characters.
    assert "<script>document.title" in (page.locator("#step-1-observation").text_content() or "")
    # The observation's script ran nowhere: not in the studio's page, not at the top.
    page.wait_for_timeout(500)
    assert page.title() == title and page.url == url  # no form navigation, no top.location
    assert not any("pwned" in text for text in console)
    assert page.evaluate("document.cookie") == "" or "pwned" not in page.evaluate("document.cookie")
    expect(page.locator("#composer-validation")).not_to_have_class(re.compile("error"))


def test_the_builder_validates_before_sending(signed_in_page: Page, studio: Stack, slow_model: str):
    page = signed_in_page
    episode = _web_episode(studio, slow_model)
    page.goto(f"/episodes/{episode}/")

    page.fill("#action-text", "explode('12')")
    expect(page.locator("#composer-validation")).to_contain_text("unknown action explode()")
    page.fill("#action-text", "")
    page.select_option("select[name=verb]", "click")
    page.select_option("#composer-elements", "12")

    expect(page.locator("#composer-validation")).to_contain_text("click('12')")
