from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from studio.worlds import services
from studio.worlds.management.commands.load_examples import EXAMPLES_DIR
from studio.worlds.models import Scenario, World, WorldRevision


def test_it_round_trips_a_bundle_byte_for_byte_through_the_ui(people, scenario, client):
    services.scenario_perturbation_add(scenario=scenario, kind="ui_interrupt")
    client.force_login(people.users["editor"])
    first = client.get(f"/worlds/scenarios/{scenario.pk}/export")
    assert first["Content-Disposition"].startswith("attachment;")

    upload = SimpleUploadedFile("b.json", first.content)
    response = client.post("/worlds/scenarios/import/", {"project": "beta", "bundle": upload})
    assert response.status_code == 404  # the editor is not in beta

    upload = SimpleUploadedFile("b.json", first.content)
    response = client.post("/worlds/scenarios/import/", {"project": "alpha", "bundle": upload})
    imported = Scenario.objects.exclude(pk=scenario.pk).get()
    assert response["Location"] == f"/worlds/scenarios/{imported.pk}/"

    second = client.get(f"/worlds/scenarios/{imported.pk}/export")
    assert second.content == first.content
    assert len(json.loads(first.content)["scenario"]["perturbations"]) == 2


def test_it_round_trips_a_bundle_through_the_cli_into_another_project(people, scenario, tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    call_command("bundle", "export", "--scenario", str(scenario.pk), "--out", str(first))
    call_command("bundle", "import", str(first), "--project", "beta")
    imported = Scenario.objects.get(project=people.other)
    call_command("bundle", "export", "--scenario", str(imported.pk), "--out", str(second))

    assert second.read_bytes() == first.read_bytes()
    assert imported.world.project == people.other
    assert imported.world_revision.content_hash == scenario.world_revision.content_hash


BAD = {
    "bundle_version": 9,
    "world": {
        "domain": "mcp",
        "title": "Broken CRM",
        "extras": {"tools": [{"name": "x", "input_schema": {"type": 12}}]},
    },
    "scenario": {
        "title": "Bad",
        "perturbations": [{"kind": "nope"}, {"kind": "truncation", "params": {"max_chars": "ten"}}],
        "success": [{"kind": "regex", "pattern": "("}],
        "max_steps": 0,
    },
}


def test_it_rejects_a_malformed_bundle_listing_every_problem_and_saving_nothing(people, client):
    client.force_login(people.users["owner"])
    upload = SimpleUploadedFile("bad.json", json.dumps(BAD).encode())
    response = client.post("/worlds/scenarios/import/", {"project": "alpha", "bundle": upload})

    page = response.content.decode()
    assert response.status_code == 400
    for needle in (
        "bundle_version",
        "world.tools[0]",
        "is not a valid JSON Schema",
        "unknown kind",
        "params.max_chars",
        "invalid regex",
        "max_steps",
    ):
        assert needle in page, needle
    assert "nothing was saved" in page
    assert World.objects.count() == WorldRevision.objects.count() == Scenario.objects.count() == 0


def test_the_cli_reports_each_problem_and_imports_nothing(people, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(BAD))
    with pytest.raises(CommandError) as error:
        call_command("bundle", "import", str(path), "--project", "alpha")
    assert str(error.value).count("\n  - ") == 6
    assert Scenario.objects.count() == World.objects.count() == 0


def test_it_rejects_text_that_is_not_json(people):
    with pytest.raises(services.BundleRejected) as error:
        services.bundle_import(project=people.project, text="{nope")
    assert error.value.problems[0].startswith("bundle: invalid JSON")


def test_load_examples_covers_every_domain_and_is_idempotent(people):
    call_command("load_examples", project="alpha", verbosity=0)
    counts = (World.objects.count(), WorldRevision.objects.count(), Scenario.objects.count())
    call_command("load_examples", project="alpha", verbosity=0)

    assert (
        World.objects.count(),
        WorldRevision.objects.count(),
        Scenario.objects.count(),
    ) == counts
    domains = set(World.objects.values_list("domain", flat=True))
    assert domains == {"mcp", "search", "terminal", "swe", "web", "os", "android"}
    assert counts[2] == len(list(EXAMPLES_DIR.glob("*.json"))) >= 7
    assert all(s.spec["perturbations"] for s in Scenario.objects.all())


def test_bootstrap_loads_the_examples_into_the_sandbox(db):
    call_command("bootstrap")
    assert Scenario.objects.filter(project__slug="sandbox").count() >= 7


def test_every_example_renders_its_editors_preview_and_prompt(people, client):
    call_command("load_examples", project="alpha", verbosity=0)
    client.force_login(people.users["viewer"])
    for scenario in Scenario.objects.select_related("world"):
        world = scenario.world
        assert client.get(f"/worlds/{world.pk}/").status_code == 200
        preview = client.get(f"/worlds/{world.pk}/revisions/1/preview")
        assert preview.status_code == 200 and preview["Content-Security-Policy"].startswith(
            "sandbox"
        )
        assert client.get(f"/worlds/scenarios/{scenario.pk}/").status_code == 200
        prompt = client.get(
            f"/worlds/scenarios/{scenario.pk}/prompt", HTTP_HX_REQUEST="true"
        ).content.decode()
        assert "tokens" in prompt and world.title.split()[0] in prompt, world.domain
        assert 'pill warn">placeholder' not in prompt  # every example scripts its first action
