"""The Sandbox's real sample traces: loaded by bootstrap once, reviewable like any import."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from studio.core.models import Membership, ModelEndpoint, Project
from studio.exports.writing import write_project_awb
from studio.traces import services
from studio.traces.models import Simulation, Trace
from studio.traces.samples import SAMPLE_DATA, SAMPLES, samples_load

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user("alice", "", "correct-horse-9")


@pytest.fixture
def project(owner):
    project = Project.objects.create(name="Review", slug="review")
    Membership.objects.create(project=project, user=owner, role="owner")
    return project


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def sandbox_traces():
    return Trace.objects.filter(project__slug="sandbox").order_by("id")


def test_bootstrap_loads_each_sample_into_the_sandbox_once_with_its_source_and_licence():
    call_command("bootstrap")
    first = list(sandbox_traces().values_list("id", "title"))
    call_command("bootstrap")

    assert list(sandbox_traces().values_list("id", "title")) == first
    assert sorted(title for _, title in first) == sorted(s.title for s in SAMPLES)
    by_title = {t.title: t for t in sandbox_traces()}
    for sample in SAMPLES:
        original = by_title[sample.title].metadata["original"]
        assert (original["source"], original["licence"]) == (sample.source, sample.licence)
        assert (SAMPLE_DATA.parents[2] / original["licence_file"]).is_file()
    web = by_title["WebArena shopping run (BrowserGym, Apache-2.0)"]
    assert web.task == "Tell me the total cost of my latest complete order?"
    assert [t.action for t in web.turns.all()] == ['click("227")']
    assert web.metadata["initial_state"].startswith("RootWebArea 'One Stop Market'")
    counts = {t.domain: t.turns.count() for t in sandbox_traces() if t.domain != "terminal"}
    assert counts == {"swe": 1, "web": 1, "mcp": 8}


def test_the_shipped_files_are_the_originals_unchanged():
    for sample in SAMPLES:
        name = Path(sample.path).name
        (original,) = FIXTURES.rglob(name)
        assert (SAMPLE_DATA / sample.path).read_bytes() == original.read_bytes(), name


def test_the_final_command_of_a_terminal_triple_is_a_turn_with_its_real_output(project):
    samples_load(project=project)
    trace = Trace.objects.get(project=project, external_id="sample:terminal/longchain_09.json")

    last = trace.turns.last()
    assert trace.turns.count() == 10
    assert last is not None
    assert (last.action, last.observation) == (
        "cd ../.. && echo proj=$PROJ here=$(basename $(pwd))",
        "proj=demo here=lab",
    )


def test_each_sample_trace_page_shows_its_source_and_licence(signed_in, project):
    samples_load(project=project)

    for trace in Trace.objects.filter(project=project):
        page = signed_in.get(f"/traces/{trace.pk}/").content.decode()
        original = trace.metadata["original"]
        assert 'id="trace-provenance"' in page, trace.title
        assert f"Source: {original['source']} · Licence: {original['licence']}" in page
        assert original["licence_file"] in page


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.path for s in SAMPLES])
def test_a_sample_trace_simulates_teacher_forced_and_its_turns_are_stored(
    sample, signed_in, project
):
    samples_load(project=project)
    trace = Trace.objects.get(project=project, title=sample.title)
    real = [t.observation for t in trace.turns.all()]
    endpoint = ModelEndpoint.objects.create(
        project=project, name="replay", kind="replay", config={"observations": real}
    )
    simulation = Simulation.objects.create(
        project=project, trace=trace, mode="teacher_forced", endpoint=endpoint
    )

    simulation = services.simulation_run(simulation_id=simulation.pk)

    assert simulation.status == "done", simulation.error
    stored = list(simulation.turns.order_by("index"))
    # The replayed answers come back as the model's would: trimmed.
    assert [t.observation for t in stored] == [o.strip() for o in real], [t.error for t in stored]
    assert signed_in.get(f"/traces/simulations/{simulation.pk}/").status_code == 200


def test_sample_traces_export_as_agentworldbench_rows(project, tmp_path):
    samples_load(project=project)
    turns = sum(t.turns.count() for t in Trace.objects.filter(project=project))

    assert write_project_awb(project=project, target=tmp_path / "out.jsonl") == turns


def test_the_home_page_links_to_the_sandbox_traces_which_lists_the_samples():
    call_command("bootstrap")
    client = Client()
    client.force_login(get_user_model().objects.get())

    page = client.get("/").content.decode()
    traces = client.get("/traces/?project=sandbox").content.decode()

    assert 'href="/traces/?project=sandbox" id="sample-traces"' in page
    for sample in SAMPLES:
        assert sample.title in traces


def test_the_home_page_has_no_sandbox_link_for_non_members(signed_in):
    assert 'id="sample-traces"' not in signed_in.get("/").content.decode()


def test_load_samples_reports_what_it_created_and_refuses_an_unknown_project(project):
    out = StringIO()
    call_command("load_samples", project="review", verbosity=2, stdout=out)
    call_command("load_samples", project="review", verbosity=2, stdout=out)

    lines = out.getvalue().splitlines()
    assert lines.count(f"Samples: {len(SAMPLES)} trace(s) created in review.") == 1
    assert lines.count("Samples: 0 trace(s) created in review.") == 1
    assert f"exists  {SAMPLES[0].title}" in lines
    with pytest.raises(CommandError, match="No project"):
        call_command("load_samples", project="nowhere")
