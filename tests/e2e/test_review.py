from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import docs_screenshot
from tests.integration.stack import Stack

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
AWB_FILE = ROOT / "tests" / "fixtures" / "agentworldbench" / "synthetic_terminal.jsonl"
#: What the replay world model answers for the three turns (turns 1 and 3 differ from the real ones).
SIMULATED = [
    "root@host:/app# pwd\n/srv/app\nroot@host:/app#",
    "root@host:/app# cd tests\nroot@host:/app/tests#",
    "root@host:/app/tests# pwd\n/app/tests\nbash: warning: clock skew\nroot@host:/app/tests#",
]


def test_it_imports_simulates_and_reviews_a_trace_with_the_keyboard(
    signed_in_page: Page, studio: Stack
):
    studio.shell(
        "from studio.core.models import ModelEndpoint, Project; "
        "ModelEndpoint.objects.get_or_create(project=Project.objects.get(slug='e2e'), name='Replay world model', "
        f"defaults={{'kind': 'replay', 'config': {{'observations': {json.dumps(SIMULATED)}}}}})"
    )
    page = signed_in_page
    page.click("nav >> text=Traces")
    page.goto("/traces/?project=e2e")
    page.set_input_files("#import-file", str(AWB_FILE))
    page.click("#import-button")
    expect(page.locator("#import-progress")).to_have_attribute("data-status", "done")
    expect(page.locator("#import-message")).to_contain_text("Imported 1 trace")
    page.click("text=See the traces")
    page.click("#trace-table >> text=terminal #1")

    page.select_option("#endpoint-select", label="Replay world model")
    page.click("#simulate-button")
    expect(page.locator("#sim-progress")).to_have_attribute("data-status", "done")
    expect(page.locator("#sim-progress")).to_contain_text("3 / 3 turns")
    page.click("#reload-review")

    expect(page.locator("#real-observation")).to_contain_text("/app")
    expect(page.locator("#simulated-observation")).to_contain_text("/srv/app")
    expect(page.locator("#diff .diff-add")).to_have_text("/srv")
    expect(page.locator("#anchors")).to_contain_text("output_lines")
    docs_screenshot(page, "review.png")

    # 4 scores the focused dimension (format), then focus moves on: 3 scores factuality.
    page.keyboard.press("4")
    expect(page.locator('#score-dims [data-dim="format"] input[value="4"]')).to_be_checked()
    page.keyboard.press("3")
    expect(page.locator('#score-dims [data-dim="factuality"] input[value="3"]')).to_be_checked()
    page.keyboard.press("a")
    expect(page.locator("#verdict-pill")).to_have_text("Accept")

    page.keyboard.press("j")
    expect(page.locator("#turn-review")).to_have_attribute("data-turn", "2")
    page.keyboard.press("r")
    expect(page.locator("#verdict-pill")).to_have_text("Reject")
    page.keyboard.press("k")
    expect(page.locator("#turn-review")).to_have_attribute("data-turn", "1")
    expect(page.locator('#score-dims [data-dim="format"] input[value="4"]')).to_be_checked()
    docs_screenshot(page, "review-annotated.png")

    saved = studio.shell(
        "from studio.traces.models import Annotation; "
        "mine = Annotation.objects.filter(simulated_turn__simulation__project__slug='e2e'); "
        "print(sorted((a.simulated_turn.index, a.format, a.factuality, a.verdict) for a in mine))"
    )
    assert saved.strip().splitlines()[-1] == "[(1, 4, 3, 'accept'), (2, None, None, 'reject')]"
