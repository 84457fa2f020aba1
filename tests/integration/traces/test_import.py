from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from studio.core.models import Membership
from studio.traces import services
from studio.traces.models import ImportJob, Trace

pytestmark = pytest.mark.django_db


def awb_lines(fixtures_dir):
    return (fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl").read_text().splitlines()


def test_it_imports_awb_rows_of_one_trajectory_as_one_trace(project, fixtures_dir):
    job = services.import_file(
        project=project, path=fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
    )
    assert job.status == "done" and job.traces_created == 1
    trace = Trace.objects.get(project=project)
    assert trace.domain == "terminal" and trace.turns.count() == 3
    first = trace.turns.get(index=1)
    assert first.prompt_text.startswith("### Turn 1\n**Current State:**")
    assert "pwd" in first.action and first.observation.endswith("/app\nroot@host:/app#")


def test_a_bad_line_imports_nothing_then_the_fixed_file_imports_and_a_second_import_adds_nothing(
    project, fixtures_dir, tmp_path
):
    lines = awb_lines(fixtures_dir)
    second = json.loads(lines[1])
    del second["turn_idx"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(second), lines[2]]) + "\n")

    job = services.import_file(project=project, path=bad)
    assert job.status == "failed"
    assert job.errors == [{"line": 2, "field": "turn_idx", "reason": "missing"}]
    assert "nothing was imported" in job.message
    assert Trace.objects.count() == 0

    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(lines) + "\n")
    assert services.import_file(project=project, path=good).traces_created == 1
    again = services.import_file(project=project, path=good)
    assert again.status == "done" and again.traces_created == 0 and again.duplicates == 1
    assert Trace.objects.count() == 1


def test_valid_lines_only_imports_the_rest(project, fixtures_dir, tmp_path):
    lines = awb_lines(fixtures_dir)
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([lines[0], "{not json", lines[1]]) + "\n")
    job = services.import_file(project=project, path=path, partial=True)
    assert job.status == "done" and job.errors[0]["line"] == 2
    assert Trace.objects.get().turns.count() == 2


def test_it_refuses_files_over_the_size_limit(project, fixtures_dir, settings):
    settings.STUDIO_MAX_UPLOAD_BYTES = 100
    with pytest.raises(services.ImportTooLarge):
        services.import_file(
            project=project, path=fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
        )


def test_the_cli_reports_bad_lines_and_creates_the_project(fixtures_dir, tmp_path, capsys):
    lines = awb_lines(fixtures_dir)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n[1, 2]\n")
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("awb", "import", str(bad), "--project", "Bench")
    assert f"{bad}:2: a row must be a JSON object" in capsys.readouterr().err
    call_command(
        "awb",
        "import",
        str(fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"),
        "--project",
        "Bench",
    )
    trace = Trace.objects.get()
    assert trace.project.name == "Bench"
    assert trace.project.memberships.get().role == "owner"


def test_export_writes_the_imported_file_back_byte_for_byte(project, fixtures_dir, tmp_path):
    source = fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
    services.import_file(project=project, path=source)
    out = tmp_path / "out.jsonl"
    call_command("awb", "export", "--project", project.name, "--out", str(out))
    assert out.read_bytes() == source.read_bytes()


def test_it_uploads_through_the_ui_and_shows_line_errors(
    signed_in, project, fixtures_dir, tmp_path, monkeypatch
):
    # The task itself runs here (the in-memory test database is not shared with task threads).
    monkeypatch.setattr("studio.traces.views.dispatch", lambda task, *args: task(*args))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(awb_lines(fixtures_dir)[0] + "\n{oops\n")
    with bad.open("rb") as handle:
        response = signed_in.post("/traces/import/", {"project": "review", "file": handle})
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/traces/imports/{job.pk}/"
    page = signed_in.get(response["Location"]).content.decode()
    assert "invalid JSON" in page and "<td>2</td>" in page
    assert f'ws-connect="/ws/traces/imports/{job.pk}/"' in page


def test_other_projects_imports_answer_404_and_viewers_cannot_upload(client, project, fixtures_dir):
    job = services.import_file(
        project=project, path=fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
    )
    bob = get_user_model().objects.create_user("bob", "", "pw-bob-123456")
    client.force_login(bob)
    assert client.get(f"/traces/imports/{job.pk}/").status_code == 404
    Membership.objects.create(project=project, user=bob, role="viewer")
    source = fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
    with source.open("rb") as handle:
        assert (
            client.post("/traces/import/", {"project": "review", "file": handle}).status_code == 403
        )
