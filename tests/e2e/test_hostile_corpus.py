"""Hostile observations stay inside their sandbox, in a real Chromium.

Every item of tests/fixtures/hostile/ (script, event handlers, javascript: URLs,
top navigation, cookie and storage theft, postMessage to the parent, nested
frames...) is shown the way the studio shows observations: an ``<iframe sandbox>``
on a studio page whose document comes from a render response. The studio page
watches for anything reaching it: messages, a changed title, window name or
storage, dialogs, popups, console output, navigation of the top window. Inside
each frame, the origin must be opaque and ``document.cookie`` unreadable.

* ``test_it_..._real_endpoint``: every domain x every item through the episodes
  render endpoint (``/episodes/<id>/steps/<i>/render``), format detected as in use.
* ``test_it_..._every_renderer``: every renderer x every item, forced, served
  with the studio's own sandboxed-document headers.
* ``test_it_detects_...``: the watchers fire when the sandbox is missing, so the
  tests above would fail if the sandbox broke.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from playwright.sync_api import Page, Route

from simulator.render import RENDERERS
from studio.lib.render_response import sandboxed_document_response
from tests.integration.stack import Stack

pytestmark = pytest.mark.e2e

HOSTILE = Path(__file__).resolve().parents[1] / "fixtures" / "hostile"
CORPUS: list[dict[str, Any]] = json.loads((HOSTILE / "index.json").read_text())
DOMAINS = ["mcp", "search", "terminal", "swe", "web", "os", "android"]

SEED = """
import json
from pathlib import Path
from django.contrib.auth import get_user_model
from studio.core.models import Project
from studio.episodes.models import Episode, Step
from studio.worlds.services import world_create

corpus = json.loads(Path({index!r}).read_text())
user = get_user_model().objects.get(username="e2e-researcher")
project = Project.objects.get(slug="e2e")
episodes = {{}}
for domain in {domains!r}:
    spec = {{"domain": domain, "title": f"Hostile {{domain}}", "premise": "Hostile corpus.",
             "initial_observation": ""}}
    world = world_create(project=project, spec=spec, user=user)
    episode = Episode.objects.create(project=project, world_revision=world.head,
                                     title=f"Hostile {{domain}}", domain=domain)
    Step.objects.bulk_create(
        Step(episode=episode, index=i + 1, action="look", status="done",
             observation=(Path({root!r}) / item["file"]).read_text())
        for i, item in enumerate(corpus)
    )
    episodes[domain] = episode.pk
print(json.dumps(episodes))
"""

# Runs in the studio page (the top window). Records everything a hostile document
# could do to it, then adds one sandboxed iframe per URL and waits for them to load.
WATCH_AND_LOAD = """
async (urls) => {
  window.__seen = [];
  window.name = 'studio-top';
  localStorage.setItem('studio-probe', '1');
  addEventListener('message', (e) => window.__seen.push('message:' + String(e.data)));
  window.__before = {title: document.title, storage: JSON.stringify(localStorage),
                     cookie: document.cookie};
  const box = document.createElement('div');
  document.body.appendChild(box);
  await Promise.all(urls.map((url) => new Promise((done) => {
    const frame = document.createElement('iframe');
    frame.setAttribute('sandbox', '');
    frame.className = 'observation';
    frame.addEventListener('load', done, {once: true});
    setTimeout(done, 20000);
    frame.src = url;
    box.appendChild(frame);
  })));
  await new Promise((done) => setTimeout(done, 1000));  // timers, meta refresh, onload
  return true;
}
"""

STATE = """
() => ({seen: window.__seen, name: window.name, title: document.title,
        before: window.__before, storage: JSON.stringify(localStorage),
        cookie: document.cookie})
"""

INSIDE = """
() => {
  let cookie;
  try { cookie = 'read:' + document.cookie; } catch (e) { cookie = 'threw:' + e.name; }
  let storage;
  try { storage = 'read:' + String(window.localStorage.length); } catch (e) { storage = 'threw:' + e.name; }
  return {origin: self.origin, cookie, storage};
}
"""


@pytest.fixture(scope="module")
def hostile_episodes(studio: Stack) -> dict[str, int]:
    code = SEED.format(index=str(HOSTILE / "index.json"), root=str(HOSTILE), domains=DOMAINS)
    episodes: dict[str, int] = json.loads(studio.shell(code).strip().splitlines()[-1])
    return episodes


class Watch:
    """What happened outside the frames while they loaded."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.events: list[str] = []
        self.render_responses: list[tuple[str, str]] = []
        page.on("dialog", self._dialog)
        page.on("popup", lambda popup: self.events.append(f"popup:{popup.url}"))
        page.on("console", self._console)
        page.on("framenavigated", self._navigated)
        page.on("response", self._response)

    def _dialog(self, dialog: Any) -> None:
        self.events.append(f"dialog:{dialog.message}")
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        # Scripts log; the browser itself reports blocked loads as errors.
        if message.type in {"log", "info", "debug", "warning"}:
            self.events.append(f"console:{message.text}")

    def _navigated(self, frame: Any) -> None:
        if frame == self.page.main_frame:
            self.events.append(f"top-navigated:{frame.url}")

    def _response(self, response: Any) -> None:
        if "/render" in response.url or "/__hostile/" in response.url:
            csp = response.headers.get("content-security-policy", "")
            self.render_responses.append((response.url, csp))

    def load(self, urls: list[str]) -> None:
        start = self.page.url
        self.page.evaluate(WATCH_AND_LOAD, urls)
        assert self.page.url == start

    def assert_contained(self, expected_frames: int) -> None:
        state = self.page.evaluate(STATE)
        assert self.events == []
        assert state["seen"] == []
        assert state["name"] == "studio-top"
        assert state["title"] == state["before"]["title"]
        assert state["storage"] == state["before"]["storage"]
        assert state["cookie"] == state["before"]["cookie"]
        assert "sessionid" not in state["cookie"]  # HttpOnly: not even the studio's JS reads it
        assert len(self.render_responses) >= expected_frames
        for url, csp in self.render_responses:
            assert "sandbox" in csp and "default-src 'none'" in csp, url
        inside = 0
        for frame in self.page.frames[1:]:
            if "/render" not in frame.url and "/__hostile/" not in frame.url:
                continue  # nested about:blank/data: frames of the hostile documents
            facts = frame.evaluate(INSIDE)
            assert facts["origin"] == "null", frame.url
            assert facts["cookie"].startswith("threw:") or facts["cookie"] == "read:", frame.url
            assert facts["storage"].startswith("threw:"), frame.url
            inside += 1
        assert inside == expected_frames


@pytest.fixture
def watched(signed_in_page: Page) -> Iterator[tuple[Page, Watch]]:
    cookies = {c["name"]: c for c in signed_in_page.context.cookies()}
    assert cookies["sessionid"]["httpOnly"] is True
    yield signed_in_page, Watch(signed_in_page)


@pytest.mark.parametrize("domain", DOMAINS)
def test_it_keeps_every_hostile_item_sandboxed_on_the_real_endpoint(
    watched: tuple[Page, Watch], hostile_episodes: dict[str, int], domain: str
) -> None:
    page, watch = watched
    episode = hostile_episodes[domain]
    urls = [f"/episodes/{episode}/steps/{i + 1}/render" for i in range(len(CORPUS))]
    watch.load(urls)
    watch.assert_contained(len(CORPUS))


def _serve_rendered(route: Route) -> None:
    # /__hostile/<format>/<file>: the item through one renderer, with the exact headers
    # of the studio's render responses (studio.lib.render_response).
    _, _, fmt, name = route.request.url.split("?")[0].rsplit("/", 3)
    text = (HOSTILE / unquote(name)).read_text()
    response = sandboxed_document_response(RENDERERS[fmt](text, title=name))
    route.fulfill(
        status=200,
        headers=dict(response.items()),
        body=response.content,
    )


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_it_keeps_every_hostile_item_sandboxed_in_every_renderer(
    watched: tuple[Page, Watch], fmt: str
) -> None:
    page, watch = watched
    page.route("**/__hostile/**", _serve_rendered)
    watch.load([f"/__hostile/{fmt}/{item['file']}" for item in CORPUS])
    watch.assert_contained(len(CORPUS))


def test_it_detects_escapes_when_the_sandbox_is_missing(signed_in_page: Page) -> None:
    """The control: the same watchers, a frame allowed to run script in the studio's origin."""
    page = signed_in_page
    escaped = (HOSTILE / "body_onload.html").read_text()
    page.route(
        "**/__unsafe/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body=escaped),
    )
    page.evaluate(
        """async () => {
          window.__seen = [];
          addEventListener('message', (e) => window.__seen.push(String(e.data)));
          const frame = document.createElement('iframe');
          frame.src = '/__unsafe/body_onload.html';
          await new Promise((done) => { frame.onload = done; document.body.appendChild(frame); });
          await new Promise((done) => setTimeout(done, 500));
        }"""
    )
    seen = page.evaluate("() => window.__seen")
    assert len(seen) == 1  # the hostile document reached the studio page
    assert page.frames[1].evaluate("() => self.origin") != "null"


def test_it_shows_hostile_steps_on_the_episode_page_in_sandboxed_frames(
    watched: tuple[Page, Watch], hostile_episodes: dict[str, int]
) -> None:
    page, watch = watched
    url = f"/episodes/{hostile_episodes['web']}/"
    page.goto(url)
    watch.events.clear()  # the goto itself
    frames = page.locator("iframe")
    assert frames.count() >= len(CORPUS)
    for sandbox in frames.evaluate_all("(fs) => fs.map((f) => f.getAttribute('sandbox'))"):
        assert sandbox is not None and "allow-same-origin" not in sandbox
    # Scroll through the timeline so that the lazy frames load, then nothing has escaped.
    for index in range(frames.count()):
        frames.nth(index).scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    assert watch.events == []
    assert page.url.endswith(url)
    for url_, csp in watch.render_responses:
        assert "sandbox" in csp, url_
    assert len(watch.render_responses) >= len(CORPUS)
