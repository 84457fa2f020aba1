from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import AsyncClient

from studio.core.models import Membership, Project
from studio.episodes.models import Episode
from studio.exports.consumers import ExportProgressConsumer
from studio.exports.models import Collection, ExportJob, ExportStatus
from studio.exports.services import (
    collection_add_items,
    collection_create,
    export_create,
    export_run,
)
from studio.lib.tasks import wait_for_inprocess_tasks
from tests.integration.exports.conftest import make_episode

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, user):
    client.force_login(user)
    return client


def test_it_adds_every_filtered_episode_and_keeps_the_filter(signed_in, project):
    make_episode(project, domain="terminal", steps=1)
    make_episode(project, domain="mcp", steps=1, with_scenario=False)

    response = signed_in.post(
        "/collections/browse/add/",
        {"project": "source", "kind": "episode", "domain": "mcp", "new_name": "MCP only"},
    )

    collection = Collection.objects.get(name="MCP only")
    assert response.status_code == 302
    assert [i.kind for i in collection.items.all()] == ["episode"]
    assert collection.filters == [{"filter": {"kind": "episode", "domain": "mcp"}, "added": 1}]


def test_it_filters_the_browse_list_by_perturbation_and_score(signed_in, project):
    make_episode(project, steps=2)

    found = signed_in.get(
        "/collections/browse/", {"project": "source", "kind": "step", "perturbation": "instruction"}
    )
    scored = signed_in.get(
        "/collections/browse/",
        {"project": "source", "kind": "step", "score_min": "0.5"},
        headers={"HX-Request": "true"},
    )

    assert "1 matching step" in found.content.decode()
    assert "<html" not in scored.content.decode()  # the fragment only
    assert "1 matching step" in scored.content.decode()


def test_it_adds_one_object_from_the_include_control(signed_in, project):
    episode = make_episode(project, steps=1)
    collection_create(project=project, name="Picked")

    form = signed_in.get("/collections/add/", {"kind": "episode", "object_id": episode.pk})
    added = signed_in.post(
        "/collections/add/item/",
        {"kind": "episode", "object_id": episode.pk, "collection": Collection.objects.get().pk},
    )

    assert "Add to collection" in form.content.decode()
    assert "Added to Picked." in added.content.decode()
    assert Collection.objects.get().items.count() == 1


def test_it_hides_other_projects_and_refuses_viewers(client, project, user):
    episode = make_episode(project, steps=1)
    collection = collection_create(project=project, name="Private")
    other = get_user_model().objects.create_user("mallory", "", "pw-12345678")
    client.force_login(other)

    assert client.get(f"/collections/{collection.pk}/").status_code == 404
    assert (
        client.get("/collections/add/", {"kind": "episode", "object_id": episode.pk}).status_code
        == 404
    )
    Membership.objects.create(project=project, user=other, role="viewer")
    assert client.get(f"/collections/{collection.pk}/").status_code == 200
    assert client.post(f"/collections/{collection.pk}/delete/").status_code == 403


def test_it_streams_a_small_export_and_records_its_manifest(signed_in, project):
    episode = make_episode(project, steps=3)
    collection = collection_create(project=project, name="Small")
    collection_add_items(collection=collection, items=[("episode", episode.pk)])

    response = signed_in.post(f"/collections/{collection.pk}/export/", {"format": "awb"})
    body = b"".join(response.streaming_content)

    assert response["Content-Disposition"] == 'attachment; filename="Small-awb.jsonl"'
    rows = [json.loads(line) for line in body.decode().splitlines()]
    assert [r["turn_idx"] for r in rows] == [1, 2, 3]
    job = ExportJob.objects.get()
    assert job.status == ExportStatus.DONE and job.streamed
    assert job.manifest["counts"]["records"] == 3
    assert job.manifest["files"][0]["bytes"] == len(body)


@pytest.mark.django_db(transaction=True)
async def test_it_streams_with_an_async_iterator_under_asgi(project, user):
    episode = await sync_to_async(make_episode)(project, steps=2)
    collection = await sync_to_async(collection_create)(project=project, name="Async")
    await sync_to_async(collection_add_items)(
        collection=collection, items=[("episode", episode.pk)]
    )
    client = AsyncClient()
    await client.aforce_login(user)

    response: Any = await client.post(f"/collections/{collection.pk}/export/", {"format": "sft"})

    assert response.is_async
    body = b"".join([chunk async for chunk in response.streaming_content])
    assert json.loads(body)["messages"][1]["role"] == "user"


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_dataset_export_in_the_background(signed_in, project):
    episode = make_episode(project, steps=2)
    collection = collection_create(project=project, name="Big")
    collection_add_items(collection=collection, items=[("episode", episode.pk)])

    response = signed_in.post(
        f"/collections/{collection.pk}/export/",
        {"format": "trajectory", "layout": "hf", "parquet": "on"},
    )
    wait_for_inprocess_tasks()

    job = ExportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/collections/exports/{job.pk}/"
    assert job.status == ExportStatus.DONE, job.error
    page = signed_in.get(f"/collections/exports/{job.pk}/").content.decode()
    assert "Download" in page and 'aria-valuenow="100"' in page
    download = signed_in.get(f"/collections/exports/{job.pk}/download/")
    assert b"".join(download.streaming_content)[:2] == b"PK"
    manifest = signed_in.get(f"/collections/exports/{job.pk}/manifest.json").json()
    assert [f["path"] for f in manifest["files"]] == [
        "data/train.jsonl",
        "data/train.parquet",
        "README.md",
        "Big-trajectory.zip",
    ]


@pytest.mark.django_db(transaction=True)
async def test_it_sends_export_progress_over_the_websocket(project, user):
    episode = await sync_to_async(make_episode)(project, steps=1)
    collection = await sync_to_async(collection_create)(project=project, name="WS")
    await sync_to_async(collection_add_items)(
        collection=collection, items=[("episode", episode.pk)]
    )
    job = await sync_to_async(export_create)(collection=collection, format="awb")
    communicator = WebsocketCommunicator(ExportProgressConsumer.as_asgi(), f"/ws/exports/{job.pk}/")
    communicator.scope["user"] = user
    communicator.scope["url_route"] = {"kwargs": {"job_id": job.pk}}
    connected, _ = await communicator.connect()
    assert connected
    first = await communicator.receive_from(timeout=5)
    assert 'id="export-progress"' in first and "Pending" in first

    await sync_to_async(export_run)(job_id=job.pk)

    messages = [await communicator.receive_from(timeout=5)]
    while "<strong>Done</strong>" not in messages[-1] and len(messages) < 5:
        messages.append(await communicator.receive_from(timeout=5))
    assert "Download" in messages[-1] and 'aria-valuenow="100"' in messages[-1]
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_it_refuses_progress_sockets_of_other_projects(project):
    collection = await sync_to_async(collection_create)(project=project, name="Hidden")
    job = await sync_to_async(export_create)(collection=collection, format="awb")
    stranger = await sync_to_async(get_user_model().objects.create_user)("eve", "", "pw-12345678")
    communicator = WebsocketCommunicator(ExportProgressConsumer.as_asgi(), f"/ws/exports/{job.pk}/")
    communicator.scope["user"] = stranger
    communicator.scope["url_route"] = {"kwargs": {"job_id": job.pk}}
    connected, code = await communicator.connect()
    assert (connected, code) == (False, 4404)


def test_it_imports_nothing_from_a_file_with_a_bad_line(tmp_path, project):
    episode = make_episode(project, steps=2)
    collection = collection_create(project=project, name="Good")
    collection_add_items(collection=collection, items=[("episode", episode.pk)])
    out = tmp_path / "t.jsonl"
    call_command("export", project="source", collection="Good", format="trajectory", out=str(out))
    good = out.read_text(encoding="utf-8")
    out.write_text(good + '{"trajectory_version": 1, "world": {}}\nnot json\n', encoding="utf-8")

    with pytest.raises(CommandError, match="nothing imported: "):
        call_command("import_data", str(out), project="Dest")

    assert (
        not Project.objects.filter(name="Dest").exists()
        or not Collection.objects.filter(project__name="Dest").exists()
    )

    assert Episode.objects.filter(project__name="Dest").count() == 0
