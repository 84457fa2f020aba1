"""An eighth domain, defined here and nowhere else, works across the whole studio.

The studio asks the domain registry for everything it shows about a domain, so a
domain registered from its own module gets the world pages, the episode form, the
composer, the observation renderers and the exports without a line elsewhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from django.test import Client

from simulator.domains import Action, Domain, register, unregister
from simulator.domains.base import HTML
from simulator.domains.forms import Composer, ComposerField, EditorField
from simulator.errors import InvalidAction
from simulator.perturbations.shapes import observation_format
from simulator.render import render, render_html
from simulator.world import World as WorldSpec
from studio.episodes import services
from studio.episodes.models import Episode
from studio.worlds.models import World
from studio.worlds.services import world_create
from tests.integration.episodes import helpers

pytestmark = pytest.mark.django_db(transaction=True)

_BUTTON = re.compile(r"<button>([^<]+)</button>")
_PRESS = re.compile(r"press\('([^'\\]+)'\)")
WELCOME = "<html><body><h1>Tickets</h1><button>Single</button><button>Return</button></body></html>"
PAY = "<html><body><h1>Single: 3.50</h1><button>Pay</button><button>Cancel</button></body></html>"


class KioskDomain(Domain):
    """A ticket kiosk's touch screen: the agent presses a button, the model shows the next screen."""

    name = "kiosk"
    title = "Ticket kiosk"
    observation_formats = (HTML,)
    renderer = HTML
    gui = True
    example_action = "press('Single')"
    initial_label = "Welcome screen"
    initial_help = "The kiosk's first screen; each <button> can be pressed."
    starter_observation = "<html><body><button>Start</button></body></html>"
    editor_fields = (EditorField("fares", "Fares", "json", 'JSON: {"single": 3.5}'),)

    def system_prompt(self, world: WorldSpec) -> str:
        fares = json.dumps(world.extras.get("fares", {}))
        return f"You are a ticket kiosk. {world.premise}\nFares: {fares}\nAnswer with the screen."

    def parse_action(self, raw: str, world: WorldSpec) -> Action:
        match = _PRESS.fullmatch(raw.strip())
        if match is None:
            raise InvalidAction("a kiosk action is press('<button label>')")
        return Action(raw=raw, kind="press", args={"button": match[1]})

    def validate_extras(self, extras: Mapping[str, Any]) -> list[str]:
        fares = extras.get("fares", {})
        if not isinstance(fares, Mapping) or not all(
            isinstance(v, int | float) for v in fares.values()
        ):
            return ["fares: must map each ticket to a price"]
        return []

    def composer(self, world: WorldSpec, observation: str) -> Composer:
        buttons = tuple(_BUTTON.findall(observation))
        field = ComposerField(
            "button", "Button", "choice", choices=buttons, placeholder="button…", elements=True
        )
        return Composer(fields=(field,), action_placeholder=self.example_action)

    def compose(self, world: WorldSpec, fields: Mapping[str, str]) -> str:
        button = fields.get("button", "").strip()
        return f"press({button!r})" if button else ""


@pytest.fixture(autouse=True)
def kiosk() -> Iterator[KioskDomain]:
    domain = KioskDomain()
    register(domain)
    yield domain
    unregister(domain.name)


@pytest.fixture
def owner() -> tuple[Any, Any, Client]:
    project, user = helpers.project_with()
    client = Client()
    client.force_login(user)
    return project, user, client


def _kiosk_world(project: Any, user: Any) -> World:
    spec = {
        "domain": "kiosk",
        "title": "Harbour station",
        "premise": "The ticket kiosk of a small harbour station.",
        "initial_observation": WELCOME,
        "extras": {"fares": {"single": 3.5}},
    }
    return world_create(project=project, spec=spec, user=user)


def test_the_world_pages_create_list_and_edit_a_world_of_it(owner):
    project, _, client = owner

    form = client.get("/worlds/new/").content.decode()
    created = client.post(
        "/worlds/new/", {"project": project.slug, "domain": "kiosk", "title": "Harbour"}
    )
    world = World.objects.get(title="Harbour")
    editor = client.get(f"/worlds/{world.pk}/").content.decode()
    bad = client.post(
        f"/worlds/{world.pk}/save",
        {"title": "Harbour", "initial_observation": WELCOME, "fares": '{"single": "cheap"}'},
    )
    good = client.post(
        f"/worlds/{world.pk}/save",
        {"title": "Harbour", "initial_observation": WELCOME, "fares": '{"single": 3.5}'},
    )
    listed = client.get("/worlds/").content.decode()

    assert 'value="kiosk"' in form and "Ticket kiosk" in form
    assert created.status_code == 302 and world.domain == "kiosk"
    assert "Welcome screen" in editor and 'name="fares"' in editor
    assert "&lt;button&gt;Start&lt;/button&gt;" in editor  # the domain's starter, escaped
    assert (
        bad.status_code == 400 and "fares: must map each ticket to a price" in bad.content.decode()
    )
    assert good.status_code == 302
    world.refresh_from_db()
    assert world.head is not None and world.head.spec["extras"] == {"fares": {"single": 3.5}}
    assert "Harbour" in listed and "kiosk" in listed


def test_an_episode_of_it_starts_composes_steps_and_renders_its_screens(owner):
    project, user, client = owner
    world = _kiosk_world(project, user)
    model = helpers.replay_endpoint(project, [PAY])

    form = client.get("/episodes/new/", {"project": project.slug}).content.decode()
    started = client.post(
        "/episodes/new/",
        {"project": project.slug, "start": f"world:{world.pk}", "endpoint": model.pk},
    )
    episode = Episode.objects.get(world_revision__world=world)
    page = client.get(f"/episodes/{episode.pk}/").content.decode()
    composed = client.post(f"/episodes/{episode.pk}/validate", {"button": "Single"})
    refused = client.post(f"/episodes/{episode.pk}/validate", {"action": "click('Single')"})

    assert "Ticket kiosk" in form and f'value="world:{world.pk}"' in form
    assert started.status_code == 302 and episode.domain == "kiosk"
    assert '<option value="Single">Single</option>' in page  # the screen's buttons
    assert 'placeholder="press(&#x27;Single&#x27;)"' in page
    assert "Valid: <code>press(&#x27;Single&#x27;)</code>" in composed.content.decode()
    assert "a kiosk action is press(" in refused.content.decode()

    step = services.step_submit(episode=episode, action="press('Single')", user=user)
    assert helpers.wait_for_step(step.pk).status == "done"
    after = client.get(f"/episodes/{episode.pk}/").content.decode()
    screen = client.get(f"/episodes/{episode.pk}/steps/1/render")

    assert f'src="/episodes/{episode.pk}/steps/1/render"' in after  # shown as a screen
    assert '<option value="Pay">Pay</option>' in after  # the composer follows the new screen
    assert screen["Content-Security-Policy"].startswith("sandbox")
    assert screen.content.decode() == render_html(PAY, title=f"{episode.title} · step 1")
    assert render("kiosk", PAY) == render_html(PAY)
    assert observation_format("", "kiosk") == HTML  # enforced errors come as a page


def test_its_episodes_export_as_awb_rows_and_trajectories(owner):
    project, user, client = owner
    episode = services.episode_create(
        project=project,
        user=user,
        world_revision=_kiosk_world(project, user).head,
        endpoint=helpers.replay_endpoint(project, [PAY]),
    )
    helpers.wait_for_step(services.step_submit(episode=episode, action="press('Single')").pk)

    browse = client.get("/collections/browse/", {"project": project.slug}).content.decode()
    client.post(
        "/collections/browse/add/",
        {"project": project.slug, "kind": "episode", "domain": "kiosk", "new_name": "Kiosk"},
    )
    collection = project.collections.get(name="Kiosk")
    exported = {
        fmt: client.post(f"/collections/{collection.pk}/export/", {"format": fmt})
        for fmt in ("awb", "trajectory")
    }
    awb = [
        json.loads(line)
        for line in b"".join(exported["awb"].streaming_content).decode().splitlines()
    ]
    (trajectory,) = [
        json.loads(line)
        for line in b"".join(exported["trajectory"].streaming_content).decode().splitlines()
    ]

    assert "<option>kiosk</option>" in browse
    assert [(row["task"], row["turn_idx"]) for row in awb] == [("agentworld/kiosk", 1)]
    assert "press('Single')" in json.dumps(awb[0]) and "Single: 3.50" in json.dumps(awb[0])
    assert trajectory["world"]["domain"] == "kiosk"
    assert [step["action"] for step in trajectory["steps"]] == ["press('Single')"]
    assert trajectory["steps"][0]["observation"] == PAY
