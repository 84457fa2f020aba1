"""An open review page shows judge scores, verdicts and the trajectory verdict as they land."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from simulator.serve import ServerOptions
from simulator.serve.threaded import start_server_in_thread
from tests.e2e.conftest import USERNAME, docs_screenshot
from tests.integration.stack import Stack

pytestmark = pytest.mark.e2e

TURN_ANSWER = (
    '<final_evaluation>{"weaknesses": ["<b>cwd</b>"], "scores": {"format": 4, "factuality": 2, '
    '"consistency": 3, "realism": 4, "quality": 3}}</final_evaluation>'
)
TRAJECTORY_ANSWER = (
    '<trajectory_evaluation>{"issues": [{"turn": 3, "earlier_turn": 1, "description": '
    '"forgets /srv"}], "scores": {"state_tracking": 2, "consistency": 4, "causality": 4, '
    '"fidelity": 3}}</trajectory_evaluation>'
)


def _simulation(studio: Stack, turn_judge: str, trajectory_judge: str) -> int:
    output = studio.shell(
        "from pathlib import Path; "
        "from django.contrib.auth.models import User; "
        "from studio.core.models import Membership, ModelEndpoint, Project; "
        "from studio.traces import services; "
        "from studio.traces.models import Simulation; "
        # A project of its own: the review test imports the same file into 'e2e'.
        "p = Project.objects.create(name='Live review', slug='e2e-live'); "
        f"Membership.objects.create(project=p, user=User.objects.get(username={USERNAME!r}), role='owner'); "
        "job = services.import_file(project=p, path=Path('tests/fixtures/agentworldbench/synthetic_terminal.jsonl')); "
        "trace = job.traces.get(); "
        "world = ModelEndpoint.objects.create(project=p, name='Live replay', kind='replay', "
        f"config={{'observations': {json.dumps(['a', 'b', 'c'])}}}); "
        f"ModelEndpoint.objects.create(project=p, name='Turn judge', kind='openai', base_url={turn_judge!r}, model='j'); "
        f"ModelEndpoint.objects.create(project=p, name='Trajectory judge', kind='openai', base_url={trajectory_judge!r}, model='j'); "
        "s = Simulation.objects.create(project=p, trace=trace, mode='teacher_forced', endpoint=world); "
        "services.simulation_run(simulation_id=s.pk); print(s.pk)"
    )
    return int(output.strip().splitlines()[-1])


def test_an_open_review_page_updates_live(signed_in_page: Page, studio: Stack):
    with (
        start_server_in_thread(ServerOptions(replay=[TURN_ANSWER])) as turn_server,
        start_server_in_thread(ServerOptions(replay=[TRAJECTORY_ANSWER])) as trajectory_server,
    ):
        pk = _simulation(studio, turn_server.base_url, trajectory_server.base_url)
        watcher = signed_in_page
        watcher.goto(f"/traces/simulations/{pk}/")
        expect(watcher.locator("#sim-progress")).to_have_attribute("data-status", "done")
        expect(watcher.locator("#turn-badges-3")).to_have_attribute("data-judge", "")

        # Another tab judges and annotates; the first one is never reloaded.
        actor = watcher.context.new_page()
        actor.goto(f"/traces/simulations/{pk}/")
        actor.select_option('select[name="endpoint"]', label="Turn judge")
        actor.click('button[name="turing"][value="0"]')
        for index in (1, 2, 3):
            expect(watcher.locator(f"#turn-badges-{index}")).to_have_attribute("data-judge", "55")
        badge = watcher.locator("#turn-badges-2 .pill.accent")
        expect(badge).to_have_text("55")
        expect(badge).to_have_attribute("title", "Judge 55.0 / 100: <b>cwd</b>")  # text, not markup

        actor.keyboard.press("a")
        expect(watcher.locator("#turn-badges-1 .pill.ok")).to_have_text("a")

        actor.select_option('select[name="endpoint"]', label="Trajectory judge")
        actor.click("#judge-trajectory")
        expect(watcher.locator("#trajectory-total")).to_have_text("56.3")
        expect(watcher.locator("#trajectory-issues a")).to_have_attribute("href", "?turn=3")
        docs_screenshot(watcher, "review-live.png")
