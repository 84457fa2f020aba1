from __future__ import annotations

import json
import re

from studio.lib.render_response import OBSERVATION_CSP
from studio.worlds.models import World

HTMX = {"HTTP_HX_REQUEST": "true"}


def _form(world, **changes):
    spec = world.head.spec
    data = {
        "title": spec["title"],
        "premise": spec["premise"],
        "initial_observation": spec["initial_observation"],
    }
    return {**data, **changes}


def test_it_creates_a_world_from_the_domain_picker_with_its_creator_recorded(people, client):
    client.force_login(people.users["editor"])
    picker = client.get("/worlds/new/?project=alpha").content.decode()
    assert all(
        f'value="{d}"' in picker
        for d in ("mcp", "search", "terminal", "swe", "web", "os", "android")
    )

    response = client.post(
        "/worlds/new/", {"project": "alpha", "domain": "terminal", "title": "Build box"}
    )
    world = World.objects.get()
    assert response["Location"] == f"/worlds/{world.pk}/"
    assert world.head is not None
    assert (world.domain, world.head.number, world.created_by) == (
        "terminal",
        1,
        people.users["editor"],
    )
    page = client.get(response["Location"]).content.decode()
    for field in ("hostname", "user", "cwd", "files"):
        assert f'name="{field}"' in page
    assert 'name="tools"' not in page


def test_the_editor_fits_the_domain(people, client):
    client.force_login(people.users["owner"])
    for domain, fields in {
        "mcp": ["tools", "resources"],
        "search": ["corpus"],
        "swe": ["repository", "files"],
        "os": ["screen"],
    }.items():
        client.post("/worlds/new/", {"project": "alpha", "domain": domain, "title": domain})
        page = client.get(f"/worlds/{World.objects.get(domain=domain).pk}/").content.decode()
        assert all(f'name="{f}"' in page for f in fields), domain


def test_saving_makes_a_revision_only_when_the_content_changes(people, world, client):
    client.force_login(people.users["editor"])
    client.post(f"/worlds/{world.pk}/save", _form(world, premise="A bookshop in Marrowby."))
    world.refresh_from_db()
    assert world.head.number == 2 and world.head.spec["premise"] == "A bookshop in Marrowby."
    first_hash = world.head.content_hash

    response = client.post(f"/worlds/{world.pk}/save", _form(world), **HTMX)
    world.refresh_from_db()
    assert world.revisions.count() == 2 and world.head.content_hash == first_hash
    assert "No changes" in response.content.decode()


def test_one_fragment_serves_the_page_and_the_htmx_swap(people, world, client):
    client.force_login(people.users["editor"])
    full = client.get(f"/worlds/{world.pk}/").content.decode()
    fragment = client.post(
        f"/worlds/{world.pk}/save", _form(world, title="Marrowby Books II"), **HTMX
    ).content.decode()

    assert "<html" in full and 'id="world-editor"' in full
    assert "<html" not in fragment and fragment.lstrip().startswith('<div id="world-editor"')
    assert "Saved revision 2" in fragment
    assert client.get(f"/worlds/{world.pk}/")["Vary"].count("HX-Request") == 1


def test_invalid_tool_schemas_are_shown_at_the_field_and_not_saved(people, client):
    client.force_login(people.users["owner"])
    client.post("/worlds/new/", {"project": "alpha", "domain": "mcp", "title": "CRM"})
    world = World.objects.get()
    tools = json.dumps([{"name": "lookup", "input_schema": {"type": "objekt"}}])

    fragment = client.post(
        f"/worlds/{world.pk}/save", _form(world, tools=tools), **HTMX
    ).content.decode()
    field = re.search(
        r'<div id="field-tools".*?</div>\s*</div>|<div id="field-tools".*?</ul>', fragment, re.S
    )
    assert field and "is not a valid JSON Schema" in field.group(0)
    assert world.revisions.count() == 1

    checked = client.post(
        f"/worlds/{world.pk}/validate", {**_form(world, tools="[{"), "field": "tools"}
    ).content.decode()
    assert checked.startswith('<div id="field-tools"') and "not valid JSON" in checked
    good = client.post(
        f"/worlds/{world.pk}/validate",
        {**_form(world, tools='[{"name": "lookup"}]'), "field": "tools"},
    )
    assert "Looks good" in good.content.decode()


def test_previews_are_sandboxed_documents(people, world, client):
    client.force_login(people.users["viewer"])
    page = client.get(f"/worlds/{world.pk}/").content.decode()
    match = re.search(r"<iframe[^>]*>", page)
    assert match is not None
    iframe = match.group(0)
    assert "sandbox" in iframe and "allow-same-origin" not in iframe
    assert f"/worlds/{world.pk}/revisions/1/preview" in iframe

    response = client.get(f"/worlds/{world.pk}/revisions/1/preview")
    assert response["Content-Security-Policy"] == OBSERVATION_CSP
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "Marrowby Books" in response.content.decode()

    client.force_login(people.users["editor"])
    draft = client.post(
        f"/worlds/{world.pk}/preview",
        {"initial_observation": "<h1>Draft page</h1><script>alert(1)</script>"},
    )
    assert draft["Content-Security-Policy"].startswith("sandbox;")
    assert "Draft page" in draft.content.decode()


def test_revisions_diff_is_escaped_and_marked(people, world, client):
    client.force_login(people.users["editor"])
    client.post(f"/worlds/{world.pk}/save", _form(world, initial_observation="<b>new & shiny</b>"))

    page = client.get(f"/worlds/{world.pk}/revisions/?a=1&b=2").content.decode()
    assert '<span class="diff-add">' in page and '<span class="diff-del">' in page
    assert "&lt;b&gt;new &amp; shiny&lt;/b&gt;" in page and "<b>new" not in page
    fragment = client.get(f"/worlds/{world.pk}/revisions/?a=2&b=1", **HTMX).content.decode()
    assert fragment.startswith('<div id="revision-diff"') and "r2 → r1" in fragment


def test_duplicate_and_archive(people, world, client):
    client.force_login(people.users["editor"])
    response = client.post(f"/worlds/{world.pk}/duplicate")
    copy = World.objects.exclude(pk=world.pk).get()
    assert response["Location"] == f"/worlds/{copy.pk}/"
    assert copy.head is not None and world.head is not None
    assert (
        copy.title == "Marrowby Books (copy)"
        and copy.head.spec["initial_observation"] == world.head.spec["initial_observation"]
    )

    client.post(f"/worlds/{world.pk}/archive", {"archived": "1"})
    listing = client.get("/worlds/").content.decode()
    assert "Marrowby Books (copy)" in listing and f'href="/worlds/{world.pk}/"' not in listing
    assert f'href="/worlds/{world.pk}/"' in client.get("/worlds/?archived=1").content.decode()


def test_viewers_see_a_read_only_editor(people, world, client):
    client.force_login(people.users["viewer"])
    page = client.get(f"/worlds/{world.pk}/").content.decode()
    assert "<fieldset disabled" in page and "Save revision" not in page


def test_the_admin_lists_every_worlds_model(scenario, admin_client):
    for model in ("world", "worldrevision", "scenario"):
        page = admin_client.get(f"/admin/worlds/{model}/")
        assert page.status_code == 200
        assert "Marrowby Books" in page.content.decode() or "Find a book" in page.content.decode()
    revision = scenario.world_revision
    assert admin_client.get(f"/admin/worlds/worldrevision/{revision.pk}/change/").status_code == 200
