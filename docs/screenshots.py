"""Screenshots of live episodes in the three GUI domains, for docs/episodes.md.

Starts the studio as ``make run`` does, creates a web, an os and an android
episode whose world model replays recorded screens (a replay endpoint), takes two
steps in each through the real task path, and photographs each episode page in
headless Chromium.

    .venv/bin/python docs/screenshots.py

The other images in docs/img/ (the editors, review, collections, rollout progress) are
taken by the end-to-end tests that walk through those pages (``docs_screenshot`` in
tests/e2e/conftest.py); run them with WORLD_STUDIO_DOCS_SCREENSHOTS=1 to refresh them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.integration.stack import embedded_studio  # noqa: E402

OUT = ROOT / "docs" / "img"
USER, PASSWORD = "docs-researcher", "docs-pass-4k2m9x"

WEB_PAGE_1 = """<html><head><title>Acme Outdoor · Tents</title><style>
body{font-family:system-ui;margin:0;color:#1d2330}header{background:#1f5134;color:#fff;padding:12px 20px;
display:flex;justify-content:space-between}main{padding:16px 20px}.grid{display:grid;
grid-template-columns:repeat(3,1fr);gap:12px}.card{border:1px solid #dde;border-radius:8px;padding:10px}
.price{font-weight:700;color:#1f5134}button{background:#1f5134;color:#fff;border:0;border-radius:6px;
padding:6px 10px}</style></head><body><header><strong>Acme Outdoor</strong><span>Cart (0)</span></header>
<main><h2>Tents</h2><div class="grid">
<div class="card" bid="21"><h3>Ridge 2P</h3><p>1.9 kg · 3 season</p><p class="price">$249</p><button bid="22">Add to cart</button></div>
<div class="card" bid="31"><h3>Summit 1P</h3><p>1.1 kg · 4 season</p><p class="price">$389</p><button bid="32">Add to cart</button></div>
<div class="card" bid="41"><h3>Family 6</h3><p>7.4 kg · 3 season</p><p class="price">$499</p><button bid="42">Add to cart</button></div>
</div></main></body></html>"""
WEB_PAGE_2 = WEB_PAGE_1.replace("Cart (0)", "Cart (1)").replace(
    "<h2>Tents</h2>",
    "<p style='background:#e3f5ec;padding:8px'>Ridge 2P added to your cart.</p><h2>Tents</h2>",
)
OS_TREE_1 = """frame 'Files — Documents' (0, 0, 1280, 720)
  tool-bar 'Toolbar' (0, 0, 1280, 48)
    push-button 'Back' (8, 8, 32, 32)
    push-button 'New Folder' (48, 8, 110, 32)
    text 'Search' (980, 10, 280, 28)
  table 'Files' (0, 48, 1280, 640)
    table-row 'report-q3.odt  42 kB  Yesterday' (0, 60, 1280, 28)
    table-row 'budget.ods  18 kB  Monday' (0, 88, 1280, 28)
    table-row 'notes.txt  2 kB  Today' (0, 116, 1280, 28)
  status-bar '3 items, 62 kB' (0, 690, 1280, 30)"""
OS_TREE_2 = OS_TREE_1.replace(
    "  status-bar '3 items, 62 kB'",
    "    table-row 'Untitled Folder  —  Now' (0, 144, 1280, 28)\n  status-bar '4 items, 62 kB'",
)
ANDROID = (ROOT / "tests" / "fixtures" / "android" / "uiautomator_youtube_home.xml").read_text()

EPISODES = {
    "web": {
        "title": "Acme Outdoor: buy a tent",
        "initial": WEB_PAGE_1,
        "observations": [WEB_PAGE_2, WEB_PAGE_2.replace("Cart (1)", "Cart (1) · Checkout")],
        "actions": ["click('22')", "click('cart')"],
        "task": "Put the lightest 3-season tent in the cart.",
        "perturbations": [{"kind": "ui_interrupt", "mode": "prompted"}],
    },
    "os": {
        "title": "Files: make a folder",
        "initial": OS_TREE_1,
        "observations": [OS_TREE_2, OS_TREE_2],
        "actions": ["pyautogui.click(103, 24)", "pyautogui.press('enter')"],
        "task": "Create a new folder in Documents.",
        "perturbations": [],
    },
    "android": {
        "title": "YouTube: open the home feed",
        "initial": ANDROID,
        "observations": [ANDROID, ANDROID],
        "actions": [
            '{"action_type": "click", "index": 3}',
            '{"action_type": "scroll", "direction": "down"}',
        ],
        "task": "Find a video about tent pitching.",
        "perturbations": [],
    },
}


def create(stack) -> dict[str, int]:  # type: ignore[no-untyped-def]
    spec_file = stack.var_dir / "episodes.json"
    spec_file.write_text(json.dumps(EPISODES))
    code = f"""
import json
from django.contrib.auth import get_user_model
from studio.core.models import Project, Membership, ModelEndpoint
from studio.worlds.services import world_create
from studio.episodes import services
from studio.lib.tasks import wait_for_inprocess_tasks
u = get_user_model().objects.create_user({USER!r}, '', {PASSWORD!r})
p = Project.objects.create(name='Docs', slug='docs')
Membership.objects.create(project=p, user=u, role='owner')
out = {{}}
for domain, e in json.load(open({str(spec_file)!r})).items():
    w = world_create(project=p, user=u, spec={{'domain': domain, 'title': e['title'], 'initial_observation': e['initial']}})
    m = ModelEndpoint.objects.create(project=p, name='replay-' + domain, kind='replay', config={{'observations': e['observations']}})
    ep = services.episode_create(project=p, user=u, world_revision=w.head, endpoint=m, title=e['title'], perturbations=e['perturbations'])
    ep.task = e['task']; ep.sampling = dict(max_tokens=20000); ep.save()
    for action in e['actions']:
        services.step_submit(episode=ep, action=action)
        wait_for_inprocess_tasks(60)
    out[domain] = ep.pk
print(json.dumps(out))
"""
    return dict(json.loads(stack.shell(code).strip().splitlines()[-1]))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with embedded_studio() as stack, sync_playwright() as playwright:
        episodes = create(stack)
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"]
        )
        page = browser.new_page(base_url=stack.base_url, viewport={"width": 1400, "height": 1000})
        page.goto("/login/")
        page.fill("input[name=username]", USER)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url("**/")
        for domain, pk in episodes.items():
            page.goto(f"/episodes/{pk}/")
            page.wait_for_selector("#step-2[data-status='done'] iframe.observation")
            page.locator("#step-2").scroll_into_view_if_needed()
            page.wait_for_timeout(800)
            page.screenshot(path=str(OUT / f"episode-{domain}.png"))
            print(f"docs/img/episode-{domain}.png")
        browser.close()


if __name__ == "__main__":
    main()
