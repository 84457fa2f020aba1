from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile

import pytest
from django.core.management import call_command

from simulator.episode import StepResult
from simulator.formats._jsonl import dumps
from simulator.formats.awb import infer_messages, read_awb
from simulator.formats.parquet import iter_parquet
from simulator.formats.trajectory import EpisodeRecord
from studio.core.models import Project
from studio.episodes.models import Episode
from studio.exports.importing import import_path
from studio.exports.models import Collection, ExportLayout
from studio.exports.services import collection_add_items, collection_create, export_to_path
from studio.traces.services import record_trace_get_or_create
from studio.worlds.models import Scenario
from tests.integration.exports.conftest import HOSTILE, make_episode, make_trace
from tests.integration.traces.awb_layouts import TRAJECTORIES

pytestmark = pytest.mark.django_db

FORMATS = ["awb", "sft", "trajectory"]


def _source_collection(project):
    episode = make_episode(project)
    second = make_episode(project, domain="mcp", steps=2, with_scenario=False, title="Second")
    trace = make_trace(project)
    collection = collection_create(project=project, name="Hostile ✓")
    items = [("episode", episode.pk), ("step", second.steps.get(index=1).pk)]
    items += [("trace_turn", trace.turns.get(index=3).pk), ("scenario", episode.scenario_id)]
    collection_add_items(collection=collection, items=items)
    return collection


def _round_trip(tmp_path, collection, format, **options):
    suffix = ".zip" if options.get("layout") == ExportLayout.HF else ".jsonl"
    first = tmp_path / f"first{suffix}"
    export_to_path(collection=collection, format=format, out=first, **options)
    target = Project.objects.create(name=f"Target {format}", slug=f"target-{format}")
    # A dataset zip names its collection after the card's title: no name given here.
    name = "" if options.get("layout") == ExportLayout.HF else "Back"
    result = import_path(project=target, path=first, collection_name=name)
    second = tmp_path / f"second{suffix}"
    export_to_path(collection=result.collection, format=format, out=second, **options)
    return first, second, result


@pytest.mark.parametrize("format", FORMATS)
def test_it_exports_imports_and_exports_byte_identical_files(tmp_path, project, format):
    collection = _source_collection(project)

    first, second, result = _round_trip(tmp_path, collection, format)

    assert first.read_bytes() == second.read_bytes()
    # the episode, the step's episode prefix and the trace: benchmark rows come back as traces
    made = result.traces if format == "awb" else result.episodes
    assert made == 3
    text = first.read_text(encoding="utf-8")
    for hostile in HOSTILE[:3]:
        assert dumps(hostile)[1:-1] in text
    assert len(first.read_bytes()) > 100_000


def test_it_round_trips_sft_with_reasoning(tmp_path, project):
    collection = _source_collection(project)

    first, second, _ = _round_trip(tmp_path, collection, "sft", include_reasoning=True)

    assert first.read_bytes() == second.read_bytes()
    record = json.loads(first.read_text(encoding="utf-8").splitlines()[0])
    assert record["reasoning"][0].startswith("thinking about step 1")
    assert [m["role"] for m in record["messages"][:3]] == ["system", "user", "assistant"]


def test_it_round_trips_scenario_bundles(tmp_path, project):
    collection = _source_collection(project)

    first, second, result = _round_trip(tmp_path, collection, "bundle")

    assert first.read_bytes() == second.read_bytes()
    assert result.scenarios == 1
    assert Scenario.objects.filter(project__slug="target-bundle", title="Flaky build ✓").exists()


@pytest.mark.parametrize("format", ["awb", "trajectory"])
def test_it_round_trips_hugging_face_zips_with_parquet(tmp_path, project, format):
    collection = _source_collection(project)
    options = {"layout": ExportLayout.HF, "parquet": True}

    first, second, _ = _round_trip(tmp_path, collection, format, **options)

    assert first.read_bytes() == second.read_bytes()
    with zipfile.ZipFile(first) as archive:
        assert sorted(archive.namelist()) == [
            "README.md",
            "data/train.jsonl",
            "data/train.parquet",
        ]
        card = archive.read("README.md").decode()
        lines = archive.read("data/train.jsonl").decode().splitlines()
        archive.extract("data/train.parquet", tmp_path)
    assert card.startswith("---\nlicense: other\n")
    assert f"num_examples: {len(lines)}" in card
    records = list(iter_parquet(tmp_path / "data/train.parquet", format))
    assert [dumps(r) for r in records] == lines


def test_it_writes_a_manifest_with_counts_hashes_and_filters(tmp_path, project):
    collection = _source_collection(project)
    collection.filters = [{"filter": {"kind": "episode", "domain": "terminal"}, "added": 1}]
    collection.save()
    out = tmp_path / "rows.jsonl"

    data = export_to_path(collection=collection, format="awb", out=out)

    saved = json.loads((tmp_path / "rows.jsonl.manifest.json").read_text())
    assert saved == data
    assert data["format"] == "awb"
    assert data["counts"] == {
        "records": 4 + 1 + 3,
        "episodes": 2,
        "traces": 1,
        "steps": 4 + 1 + 3,
        "scenarios": 0,
        "skipped": 1,
    }
    assert data["files"] == [
        {
            "path": "rows.jsonl",
            "bytes": out.stat().st_size,
            "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
        }
    ]
    assert data["filter"][0]["filter"]["domain"] == "terminal"
    assert data["studio_version"] and data["created_at"]


def test_it_keeps_the_episode_fields_through_a_trajectory_round_trip(tmp_path, project):
    collection = _source_collection(project)

    _, _, result = _round_trip(tmp_path, collection, "trajectory")

    source = Episode.objects.get(project=project, title="Hostile episode ✓")
    copy = Episode.objects.get(project=result.collection.project, title="Hostile episode ✓")
    assert copy.created_at == source.created_at
    assert copy.metadata == {"tags": ["hostile", "long"]}
    assert copy.scenario is not None and source.scenario is not None
    assert copy.scenario.spec == source.scenario.spec
    assert [s.reward for s in copy.steps.order_by("index")] == [0.0, 0.0, 0.0, 1.0]
    assert copy.steps.get(index=4).observation == HOSTILE[3]


def test_it_produces_awb_rows_an_eval_reader_accepts(tmp_path, project):
    trace = make_trace(project, turns=3)
    collection = collection_create(project=project, name="Simulated")
    collection_add_items(collection=collection, items=[("trace_turn", trace.turns.last().pk)])
    out = tmp_path / "awb.jsonl"

    export_to_path(collection=collection, format="awb", out=out)

    rows = read_awb(out)
    assert [r.turn_idx for r in rows] == [1, 2, 3]
    assert rows[0].data["id"] == "t-1" and rows[0].domain == "mcp"
    check = subprocess.run(
        [sys.executable, "-m", "simulator", "awb-check", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr
    assert "rows: 3 valid, 0 invalid" in check.stdout

    messages = infer_messages(rows[2].data)
    assert messages[0]["content"] == trace.system_prompt
    assert len(messages) == 1 + 2 * 2 + 1


def test_it_round_trips_through_the_stable_command_line(tmp_path, project):
    _source_collection(project)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"

    call_command(
        "export", project="source", collection="Hostile ✓", format="trajectory", out=str(first)
    )
    call_command("import_data", str(first), project="Brand new", collection="Copy")
    call_command(
        "export", project="Brand new", collection="Copy", format="trajectory", out=str(second)
    )

    assert first.read_bytes() == second.read_bytes()
    assert Collection.objects.get(project__name="Brand new").name == "Copy"


def test_benchmark_rows_keep_their_sections_fences_and_instruction_through_an_import(
    tmp_path, project
):
    full = [t for t in TRAJECTORIES if not t.only_last]
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(line + "\n" for t in full for line in t.lines()), encoding="utf-8")
    result = import_path(project=project, path=source, collection_name="Rows")
    out = tmp_path / "out.jsonl"
    export_to_path(collection=result.collection, format="awb", out=out)
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert exported == [row for t in full for row in t.rows()]


def test_a_trajectory_round_trip_keeps_what_the_first_export_had_even_when_empty(tmp_path, project):
    episode = make_episode(project, steps=2, with_scenario=False)
    Episode.objects.filter(pk=episode.pk).update(agent={}, perturbations=[], sampling={})
    collection = collection_create(project=project, name="No agent")
    collection_add_items(collection=collection, items=[("episode", episode.pk)])

    first, second, result = _round_trip(tmp_path, collection, "trajectory")

    assert first.read_bytes() == second.read_bytes()
    copy = Episode.objects.get(project=result.collection.project)
    assert copy.agent == {}
    third = tmp_path / "third.jsonl"
    export_to_path(collection=result.collection, format="trajectory", out=third)
    assert third.read_bytes() == first.read_bytes()


def test_an_episode_and_a_recorded_trace_of_one_world_get_the_same_row_defaults(tmp_path, project):
    episode = make_episode(project, steps=1, with_scenario=False)
    episode.task = ""
    episode.save()
    world = episode.world_revision.to_world()
    step = episode.steps.get(index=1)
    record = EpisodeRecord(world, (StepResult(step.action, step.observation, "", "", ()),))
    trace, _ = record_trace_get_or_create(project=project, record=record)
    collection = collection_create(project=project, name="Both")
    collection_add_items(
        collection=collection,
        items=[("episode", episode.pk), ("trace_turn", trace.turns.get().pk)],
    )
    out = tmp_path / "rows.jsonl"

    export_to_path(collection=collection, format="awb", out=out)

    from_episode, from_trace = (row.data for row in read_awb(out))
    for key in ("task", "prompt", "response", "current_prompt", "system_str"):
        assert from_episode[key] == from_trace[key], key
    assert from_trace["task"] == "agentworld/terminal"
