"""Reviewed turns to a dataset in one step: the form, the collection, the SFT and AWB exports."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from simulator.awb_turns import render_observation
from studio.core.models import Membership
from studio.exports.curation import collection_add_curated
from studio.exports.models import Collection, ExportJob
from studio.exports.records import turn_row
from studio.exports.services import export_to_path
from studio.traces import services
from studio.traces.models import SimulatedTurn, Simulation, Trace
from studio.traces.queues import queue_create
from tests.integration.exports.conftest import make_trace

pytestmark = pytest.mark.django_db

CORRECTED = "CORRECTED by bob — ✓ «the real listing»"


@pytest.fixture
def bob(project):
    user = get_user_model().objects.create_user("bob", "", "pw-12345678")
    Membership.objects.create(project=project, user=user, role="editor")
    return user


@pytest.fixture
def signed_in(client, user):
    client.force_login(user)
    return client


def simulate(trace, mode="teacher_forced"):
    simulation = Simulation.objects.create(
        project=trace.project, trace=trace, mode=mode, status="done"
    )
    for turn in trace.turns.order_by("index"):
        SimulatedTurn.objects.create(
            simulation=simulation,
            turn=turn,
            index=turn.index,
            observation=f"SIMULATED-{turn.index}",
            reasoning=f"reasoning-{turn.index}",
        )
    return simulation


def curate(simulation, user, bob):
    """Turn 1 accepted by alice, turn 2 rejected and corrected by bob, turn 3 rejected."""
    one, two, three = simulation.turns.order_by("index")
    services.annotation_save(turn=one, user=user, data={"verdict": "accept"})
    services.annotation_save(
        turn=two, user=bob, data={"verdict": "reject", "corrected_observation": CORRECTED}
    )
    services.annotation_save(turn=three, user=user, data={"verdict": "reject"})
    return one, two


def test_curated_turns_go_to_a_collection_and_an_sft_export_with_the_correction(
    signed_in, project, user, bob, tmp_path
):
    trace = make_trace(project, turns=3)
    simulation = simulate(trace)
    one, two = curate(simulation, user, bob)
    queue = queue_create(project=project, name="Review", annotators=[user, bob], scope={})

    response = signed_in.post(
        "/collections/add/curated/",
        {"project": project.slug, "queue": queue.pk, "new_collection": "Curated"},
    )
    collection = Collection.objects.get(name="Curated")
    assert response["Location"] == f"/collections/{collection.pk}/"
    assert list(collection.items.values_list("kind", flat=True)) == ["curated_turn"] * 2
    detail = signed_in.get(response["Location"]).content.decode()
    assert "turn 2 · corrected by bob" in detail and "turn 1 · accepted by alice" in detail

    manifest = export_to_path(collection=collection, format="sft", out=tmp_path / "sft.jsonl")
    data = (tmp_path / "sft.jsonl").read_bytes()

    assert CORRECTED.encode() in data
    assert b"SIMULATED-2" not in data and b"SIMULATED-3" not in data
    first, second = (json.loads(line) for line in data.decode().splitlines())
    assert first["messages"][-1] == {"role": "assistant", "content": "SIMULATED-1"}
    # Turn 2 is asked with the real turn 1 before it (the simulation was teacher-forced).
    assert [m["role"] for m in second["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert second["messages"][2]["content"] == trace.turns.get(index=1).observation
    assert second["messages"][-1]["content"] == CORRECTED
    provenance = manifest["provenance"]
    assert [
        (p["record"], p["turn"], p["curation"], p["annotator"], p["verdict"]) for p in provenance
    ] == [(0, 1, "accepted", "alice", "accept"), (1, 2, "corrected", "bob", "reject")]
    assert provenance[1]["annotation"] == two.annotations.get().pk
    assert provenance[1]["simulated_turn"] == two.pk
    saved = json.loads((tmp_path / "sft.jsonl.manifest.json").read_text())
    assert saved["provenance"] == provenance


def test_the_streamed_download_records_provenance_in_the_job_manifest(
    signed_in, project, user, bob
):
    simulation = simulate(make_trace(project, turns=3))
    curate(simulation, user, bob)
    signed_in.post(
        "/collections/add/curated/",
        {"project": project.slug, "simulation": simulation.pk, "new_collection": "Direct"},
    )
    collection = Collection.objects.get(name="Direct")

    response = signed_in.post(f"/collections/{collection.pk}/export/", {"format": "sft"})
    body = b"".join(response.streaming_content)

    assert CORRECTED.encode() in body and b"SIMULATED-2" not in body
    job = ExportJob.objects.get()
    assert [p["curation"] for p in job.manifest["provenance"]] == ["accepted", "corrected"]


def test_the_awb_export_keeps_the_benchmark_row_and_replaces_only_its_ground_truth(
    project, user, bob, tmp_path, fixtures_dir
):
    services.import_file(
        project=project, path=fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
    )
    trace = Trace.objects.get()
    simulation = simulate(trace)
    _, two = curate(simulation, user, bob)
    collection = Collection.objects.create(project=project, name="AWB")
    result = collection_add_curated(collection=collection, turns=simulation.turns.all())
    assert (result.added, result.corrected, result.accepted, result.disputed) == (2, 1, 1, 0)

    export_to_path(collection=collection, format="awb", out=tmp_path / "awb.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "awb.jsonl").read_text().splitlines()]

    expected = turn_row(trace, 2)
    expected["response"][-1] = render_observation(CORRECTED)
    assert rows[1] == expected
    assert rows[0]["response"][-1] == render_observation("SIMULATED-1")


def test_a_free_running_turn_keeps_the_simulated_history_it_was_asked_with(
    project, user, bob, tmp_path
):
    simulation = simulate(make_trace(project, turns=3), mode="free_running")
    curate(simulation, user, bob)
    collection = Collection.objects.create(project=project, name="Free")
    collection_add_curated(collection=collection, turns=simulation.turns.all())
    export_to_path(collection=collection, format="sft", out=tmp_path / "free.jsonl")

    second = json.loads((tmp_path / "free.jsonl").read_text().splitlines()[1])
    assert second["messages"][2]["content"] == "SIMULATED-1"
    assert second["messages"][-1]["content"] == CORRECTED


def test_disputed_turns_are_left_out_and_withdrawn_curation_is_skipped_on_export(
    project, user, bob, tmp_path
):
    simulation = simulate(make_trace(project, turns=3))
    one, two, _ = simulation.turns.order_by("index")
    services.annotation_save(turn=one, user=user, data={"verdict": "accept"})
    services.annotation_save(turn=one, user=bob, data={"verdict": "reject"})
    services.annotation_save(turn=two, user=user, data={"verdict": "accept"})
    collection = Collection.objects.create(project=project, name="Mixed")
    result = collection_add_curated(collection=collection, turns=simulation.turns.all())
    assert (result.added, result.disputed) == (1, 1)

    services.annotation_save(turn=two, user=user, data={"verdict": "reject"})
    manifest = export_to_path(collection=collection, format="sft", out=tmp_path / "none.jsonl")
    assert manifest["counts"]["records"] == 0 and manifest["counts"]["skipped"] == 1
    assert "provenance" not in manifest


def test_only_editors_add_curated_turns(client, project, user):
    viewer = get_user_model().objects.create_user("victor", "", "pw-12345678")
    Membership.objects.create(project=project, user=viewer, role="viewer")
    client.force_login(viewer)
    response = client.post(
        "/collections/add/curated/", {"project": project.slug, "new_collection": "Nope"}
    )
    assert response.status_code == 403
    assert not Collection.objects.filter(name="Nope").exists()


def test_the_form_asks_for_a_collection_and_sends_you_back_to_the_queue(signed_in, project, user):
    queue = queue_create(project=project, name="Back", annotators=[user], scope={})
    response = signed_in.post(
        "/collections/add/curated/", {"project": project.slug, "queue": queue.pk}
    )
    assert response["Location"] == f"/traces/queues/{queue.pk}/"
    page = signed_in.get(response["Location"]).content.decode()
    assert "Choose a collection or name a new one." in page
    assert 'id="add-curated"' in page and not Collection.objects.exists()
