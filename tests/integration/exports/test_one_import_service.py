"""One import service, two front doors: a file becomes the same objects through each."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from studio.core.access import projects_for
from studio.core.models import Project
from studio.exports.models import Collection
from studio.traces.models import Trace
from tests.integration.traces.awb_layouts import TRAJECTORIES, file_text

pytestmark = pytest.mark.django_db


def _traces(project: Project) -> list[tuple[object, ...]]:
    """Everything a trace holds, without ids, in import order."""
    return [
        (
            trace.domain,
            trace.source,
            trace.task,
            trace.external_id,
            trace.title,
            trace.system_prompt,
            trace.metadata,
            trace.content_hash,
            [
                (t.index, t.action, t.observation, t.prompt_text)
                for t in trace.turns.order_by("index")
            ],
            [(r.turn_idx, r.position, r.text) for r in trace.rows.order_by("position")],
        )
        for trace in Trace.objects.filter(project=project).order_by("id")
    ]


def test_an_awb_file_becomes_the_same_traces_through_both_doors_in_projects_its_owner_sees(
    tmp_path, client
):
    source = tmp_path / "bench.jsonl"
    source.write_text(file_text(), encoding="utf-8", newline="")

    call_command("awb", "import", str(source), "--project", "Through awb")
    call_command("import_data", str(source), "--project", "Through import_data")

    by_awb = Project.objects.get(name="Through awb")
    by_import_data = Project.objects.get(name="Through import_data")
    assert len(_traces(by_awb)) == len(TRAJECTORIES)
    assert _traces(by_awb) == _traces(by_import_data)
    for project in (by_awb, by_import_data):
        collection = Collection.objects.get(project=project)
        assert [i.kind for i in collection.items.all()] == ["trace_turn"] * len(TRAJECTORIES)
    owner = get_user_model().objects.get(username="researcher")
    assert set(projects_for(owner)) == {by_awb, by_import_data}
    client.force_login(owner)
    page = client.get("/traces/", {"project": by_import_data.slug}).content.decode()
    assert Trace.objects.filter(project=by_import_data).earliest("id").title in page


def test_the_import_page_makes_the_same_traces_too(tmp_path, client):
    source = tmp_path / "bench.jsonl"
    source.write_text(file_text(), encoding="utf-8", newline="")
    call_command("awb", "import", str(source), "--project", "Through awb")
    by_awb = Project.objects.get(name="Through awb")
    client.force_login(get_user_model().objects.get(username="researcher"))
    page = Project.objects.create(name="Through the page", slug="page")
    page.memberships.create(user=get_user_model().objects.get(username="researcher"), role="owner")

    with source.open("rb") as handle:
        response = client.post("/collections/import/", {"project": "page", "file": handle})

    assert response.status_code == 302
    assert _traces(page) == _traces(by_awb)
