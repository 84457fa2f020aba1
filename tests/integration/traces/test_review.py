from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from simulator.serve import ServerOptions
from simulator.serve.threaded import start_server_in_thread
from studio.core.models import ModelEndpoint
from studio.traces import selectors, services, turn_judging
from studio.traces.models import Annotation, JudgeScore, SimulatedTurn, Simulation, Trace

pytestmark = pytest.mark.django_db

JUDGE_ANSWER = (
    '<final_evaluation>\n```json\n{"strengths": ["prompt"], "weaknesses": ["cwd"], '
    '"scores": {"format": 4, "factuality": 2, "consistency": 3, "realism": 4, "quality": 3}}\n```\n'
    "</final_evaluation>"
)


@pytest.fixture
def trace(project, fixtures_dir):
    services.import_file(
        project=project, path=fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
    )
    return Trace.objects.get()


def simulate(trace, observations, mode="teacher_forced"):
    endpoint = ModelEndpoint.objects.create(
        project=trace.project,
        name=f"replay-{mode}",
        kind="replay",
        config={"observations": observations},
    )
    simulation = Simulation.objects.create(
        project=trace.project, trace=trace, mode=mode, endpoint=endpoint
    )
    return services.simulation_run(simulation_id=simulation.pk)


def test_it_simulates_a_trace_and_stores_each_turn_with_verifiers(trace):
    simulation = simulate(trace, ["root@host:/app# pwd\n/srv\nroot@host:/app#", "x", "y"])
    assert simulation.status == "done", simulation.error
    turns = list(simulation.turns.all())
    assert [t.index for t in turns] == [1, 2, 3]
    assert turns[0].observation.startswith("root@host:/app# pwd\n/srv")
    assert turns[0].verifiers and turns[0].real_verifiers
    assert services.simulation_run(simulation_id=simulation.pk).turns.count() == 3  # claimed once


def test_the_review_page_shows_both_sides_with_diff_anchors_and_annotation(signed_in, trace):
    simulation = simulate(trace, ["root@host:/app# pwd\n/srv\nroot@host:/app#", "x", "y"])
    page = signed_in.get(f"/traces/simulations/{simulation.pk}/?turn=1").content.decode()
    assert 'id="real-observation"' in page and 'id="simulated-observation"' in page
    assert (
        '<span class="diff-del">app</span>' in page and '<span class="diff-add">srv</span>' in page
    )
    assert "<code>cwd</code>" in page and "<code>output_lines</code>" in page
    assert 'id="annotation-form"' in page and "js/review.js" in page
    fragment = signed_in.get(f"/traces/simulations/{simulation.pk}/?turn=2", HTTP_HX_REQUEST="true")
    assert fragment.content.decode().startswith('<div id="turn-review" data-turn="2"')


def test_model_text_is_escaped_and_gui_sides_render_in_sandboxed_frames(signed_in, project):
    hostile = '<script>alert(1)</script><h1 onclick="x()">Home</h1>'
    trace = Trace.objects.create(
        project=project, domain="web", source="awb", title="w", content_hash="h"
    )
    trace.turns.create(index=1, action="click('12')", observation="<html><title>A</title></html>")
    simulation = simulate(trace, [hostile])
    turn = simulation.turns.get()
    assert turn.observation == hostile, turn.error
    page = signed_in.get(f"/traces/simulations/{simulation.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in page
    assert (
        f'<iframe class="observation" sandbox title="Simulated observation" src="/traces/turns/{turn.pk}/render/simulated/">'
        in page
    )
    response = signed_in.get(f"/traces/turns/{turn.pk}/render/simulated/")
    assert response["Content-Security-Policy"].startswith("sandbox; default-src 'none'")


def test_annotations_are_one_per_user_and_feed_the_queue_and_agreement(signed_in, trace, owner):
    simulation = simulate(trace, ["a", "b", "c"])
    first = simulation.turns.get(index=1)
    assert selectors.annotation_queue(project=trace.project).count() == 3
    for data in (
        {"format": "2"},
        {"factuality": "4", "verdict": "accept", "tags": "wrong cwd, noise"},
    ):
        response = signed_in.post(f"/traces/turns/{first.pk}/annotate/", data)
        assert response.status_code == 200
    annotation = Annotation.objects.get()
    assert (annotation.format, annotation.factuality, annotation.verdict) == (2, 4, "accept")
    assert annotation.tags == ["wrong cwd", "noise"]
    assert signed_in.post(f"/traces/turns/{first.pk}/annotate/", {"format": "9"}).status_code == 400
    assert selectors.annotation_queue(project=trace.project).count() == 2
    services.judge_score_save(
        turn=first,
        fields={
            "total_score": 3.0,
            "format": 3,
            "factuality": 4,
            "consistency": 3,
            "realism": 3,
            "quality": 2,
            "failed": 0.0,
        },
        endpoint_label="test",
    )
    agg = selectors.aggregates(project=trace.project)
    assert agg.agreement["all"].n == 2 and agg.agreement["all"].mean_abs_diff == 0.5
    assert agg.by_domain[0].label == "terminal" and agg.by_domain[0].total == 50.0
    page = signed_in.get("/traces/stats/?project=review").content.decode()
    assert 'id="agreement"' in page and "0.50" in page


def test_the_judge_scores_every_turn_through_an_openai_endpoint(trace):
    simulation = simulate(trace, ["a", "b", "c"])
    with start_server_in_thread(ServerOptions(replay=[JUDGE_ANSWER] * 3)) as server:
        endpoint = ModelEndpoint.objects.create(
            project=trace.project,
            name="judge",
            kind="openai",
            base_url=server.base_url,
            model="judge",
        )
        # The replay server answers by turn count; the judge request has one user message.
        judged = turn_judging.judge_simulation(simulation_id=simulation.pk, endpoint_id=endpoint.pk)
        assert judged == 3
        bodies = list(server.state.requests)
    # An OpenAI-compatible judge gets no SGLang-only field and eval.py's sampling.
    assert len(bodies) == 3
    for body in bodies:
        assert set(body) == {
            "model",
            "messages",
            "stream",
            "stream_options",
            "max_tokens",
            "temperature",
        }
        assert (body["max_tokens"], body["temperature"]) == (32768, 0.6)
    score = JudgeScore.objects.filter(simulated_turn__index=1).get()
    assert (score.format, score.factuality, score.mean_score, score.total_score) == (
        4,
        2,
        3.2,
        55.00000000000001,
    )
    assert score.weaknesses == ["cwd"] and not score.failed


def test_other_projects_simulations_answer_404(client, trace):
    simulation = simulate(trace, ["a", "b", "c"])
    turn = simulation.turns.first()
    client.force_login(get_user_model().objects.create_user("mallory", "", "pw-mallory-1"))
    assert client.get(f"/traces/simulations/{simulation.pk}/").status_code == 404
    assert client.get(f"/traces/turns/{turn.pk}/render/real/").status_code == 404
    assert (
        client.post(f"/traces/turns/{turn.pk}/annotate/", {"verdict": "accept"}).status_code == 404
    )


def test_awb_infer_judge_score_round_trip_through_the_cli(project, fixtures_dir, tmp_path, capsys):
    source = fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
    predictions, judged = tmp_path / "predictions.jsonl", tmp_path / "judged.jsonl"
    with start_server_in_thread(ServerOptions()) as server:
        call_command(
            "awb",
            "infer",
            "--input",
            str(source),
            "--output",
            str(predictions),
            "--endpoint",
            server.base_url + "/v1",
            "--model",
            "m",
            "--concurrency",
            "4",
            "--project",
            "review",
        )
        rows = [json.loads(line) for line in predictions.read_text().splitlines()]
        assert [r["turn_idx"] for r in rows] == [1, 2, 3]
        assert all("<predicted_observation>" in r["gen"] for r in rows)
        assert list(rows[0])[-1] == "gen"
        # Resume: nothing left to do, nothing sent.
        sent = len(server.state.requests)
        call_command(
            "awb",
            "infer",
            "--input",
            str(source),
            "--output",
            str(predictions),
            "--endpoint",
            server.base_url,
            "--model",
            "m",
            "--resume",
        )
        assert "0 row(s) inferred, 3 already done" in capsys.readouterr().err
        assert len(server.state.requests) == sent
    with start_server_in_thread(ServerOptions(replay=[JUDGE_ANSWER])) as judge:
        call_command(
            "awb",
            "judge",
            "--input",
            str(predictions),
            "--output",
            str(judged),
            "--judge-endpoint",
            judge.base_url,
            "--judge-model",
            "j",
            "--project",
            "review",
        )
    out = capsys.readouterr().out
    assert "--- Terminal (3/3 valid, 0 failed) ---" in out and "Overall: 55.00" in out
    judged_rows = [json.loads(line) for line in judged.read_text().splitlines()]
    assert judged_rows[0]["total_score"] == 3.2 and judged_rows[0]["failed"] == 0.0
    assert set(judged_rows[0]) >= {
        "format",
        "factuality",
        "consistency",
        "realism",
        "quality",
        "strengths",
        "weaknesses",
        "extracted_output",
        "judge_raw_output",
    }
    call_command("awb", "score", "--input", str(judged))
    assert "Overall: 55.00\nTotal samples: 3, Valid: 3, Failed: 0" in capsys.readouterr().out
    assert SimulatedTurn.objects.filter(simulation__origin="awb").count() == 3
    assert JudgeScore.objects.count() == 3
