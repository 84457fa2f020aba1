"""AgentWorldBench rows from all seven domains: imported, exported byte for byte, and
re-simulated with exactly the requests eval.py sends (through the Simulate button)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from django.core.management import call_command

from simulator.serve import ServerOptions
from simulator.serve.threaded import start_server_in_thread
from studio.core.models import ModelEndpoint
from studio.lib.tasks import wait_for_inprocess_tasks
from studio.traces.models import SimulatedTurn, Simulation, Trace, TraceTurn
from tests.integration.traces.awb_layouts import TRAJECTORIES, eval_messages, file_text

STREAMING = {"stream", "stream_options"}


@pytest.fixture
def awb_file(tmp_path):
    path = tmp_path / "layouts.jsonl"
    path.write_text(file_text(), encoding="utf-8", newline="")
    return path


@pytest.mark.django_db
@pytest.mark.parametrize("ending", ["lf", "no final newline", "crlf"])
def test_import_then_export_gives_back_the_same_bytes(project, awb_file, tmp_path, ending):
    text = awb_file.read_text(encoding="utf-8")
    if ending == "no final newline":
        text = text.removesuffix("\n")
    elif ending == "crlf":
        text = text.replace("\n", "\r\n")
    awb_file.write_text(text, encoding="utf-8", newline="")
    call_command("awb", "import", str(awb_file), "--project", project.name)
    assert Trace.objects.filter(project=project).count() == len(TRAJECTORIES)
    out = tmp_path / "out.jsonl"
    call_command("awb", "export", "--project", project.name, "--out", str(out))
    assert out.read_bytes() == awb_file.read_bytes()


@pytest.mark.django_db
def test_two_files_without_final_newlines_export_as_valid_jsonl(project, tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(TRAJECTORIES[0].lines()[0], encoding="utf-8")
    second.write_text(TRAJECTORIES[2].lines()[0], encoding="utf-8")
    for path in (first, second):
        call_command("awb", "import", str(path), "--project", project.name)
    out = tmp_path / "out.jsonl"
    call_command("awb", "export", "--project", project.name, "--out", str(out))
    assert out.read_text(encoding="utf-8") == first.read_text() + "\n" + second.read_text()


@pytest.mark.django_db
def test_turn_prompts_with_sections_are_read_as_their_parts(project, awb_file):
    call_command("awb", "import", str(awb_file), "--project", project.name)
    desktop = Trace.objects.get(project=project, domain="os")
    first = desktop.turns.get(index=1)
    assert first.action == "BrowserTools.open_privacy_settings()"
    assert desktop.metadata["agent_task"] == "Turn off cookies"
    assert desktop.metadata["initial_state"].startswith("window 'Settings'")
    assert desktop.metadata["instruction"] == TRAJECTORIES[5].instruction
    actions = dict(TraceTurn.objects.filter(trace__project=project).values_list("pk", "action"))
    assert not any(action.startswith(("```", "### Turn")) for action in actions.values())


@pytest.mark.django_db(transaction=True)
def test_resimulation_sends_eval_py_requests_and_refuses_no_turn(signed_in, project, awb_file):
    call_command("awb", "import", str(awb_file), "--project", project.name)
    with start_server_in_thread(ServerOptions(reasoning=True)) as server:
        endpoint = ModelEndpoint.objects.create(
            project=project,
            name="agentworld",
            kind="openai",
            base_url=server.base_url + "/v1",
            model="Qwen/Qwen-AgentWorld-35B-A3B",
        )
        for trace in Trace.objects.filter(project=project):
            response = signed_in.post(
                f"/traces/{trace.pk}/simulate/",
                {"mode": "teacher_forced", "endpoint": endpoint.pk},
            )
            assert response.status_code == 302
        wait_for_inprocess_tasks(timeout=60)
        bodies = list(server.state.requests)

    simulations = Simulation.objects.filter(project=project)
    assert {s.status for s in simulations} == {"done"}
    turns = SimulatedTurn.objects.filter(simulation__project=project)
    assert [t.error for t in turns if t.error] == []
    assert turns.count() == sum(len(t.turns) for t in TRAJECTORIES)

    expected = Counter(
        json.dumps(
            {
                "model": "Qwen/Qwen-AgentWorld-35B-A3B",
                "messages": eval_messages(row),
                "max_tokens": 32768,
                "temperature": 0.6,
            },
            sort_keys=True,
        )
        for trajectory in TRAJECTORIES
        for row in trajectory.rows()
    )
    sent = Counter(
        json.dumps({k: v for k, v in body.items() if k not in STREAMING}, sort_keys=True)
        for body in bodies
    )
    assert sent == expected
    assert all(body["stream"] is True for body in bodies)  # streaming is allowed
