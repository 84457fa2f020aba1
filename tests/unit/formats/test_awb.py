from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from simulator.episode import Turn
from simulator.errors import FormatError
from simulator.formats.awb import (
    AwbRow,
    awb_rows_to_trajectories,
    episode_to_awb_rows,
    iter_awb,
    read_awb,
    write_awb,
)

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures/agentworldbench/synthetic_terminal.jsonl"


def test_reading_and_writing_the_fixture_is_byte_identical(tmp_path):
    rows = read_awb(FIXTURE)
    assert [r.line for r in rows] == [1, 2, 3]
    out = tmp_path / "out.jsonl"
    write_awb(rows, out)
    assert out.read_bytes() == FIXTURE.read_bytes()


def test_unknown_keys_judged_fields_order_and_unicode_survive(tmp_path):
    row = json.loads(FIXTURE.read_text().splitlines()[0])
    judged = {
        "zeta": 1,
        **row,
        "gen": "<think>x</think><predicted_observation>é \x1b[31mred\x1b[0m <b></predicted_observation>",
        "total_score": 4.5,
        "format": 5,
        "factuality": 4,
        "consistency": 4,
        "realism": 5,
        "quality": 4,
        "failed": 0.0,
        "strengths": ["exact"],
        "weaknesses": [],
        "extracted_output": "é",
        "judge_raw_output": "日本語",
        "scores": {"a": 1},
        "response": ["x" * 200_000],
    }
    line = json.dumps(judged, ensure_ascii=False) + "\n"
    rows = read_awb([line])
    assert list(rows[0].data) == list(judged)
    buffer = io.StringIO()
    write_awb(rows, buffer)
    assert buffer.getvalue() == line
    path = tmp_path / "judged.jsonl"
    write_awb([judged], path)
    assert path.read_text(encoding="utf-8") == line


def test_it_reports_every_bad_line_and_keeps_going():
    good = FIXTURE.read_text().splitlines()[0]
    row = json.loads(good)
    lines = [
        good,
        "{not json",
        "",
        json.dumps({**row, "turn_idx": "1", "prompt": "x"}),
        json.dumps({k: v for k, v in row.items() if k != "system_str"}),
        json.dumps({**row, "turn_idx": 4}),
        json.dumps({**row, "turn_idx": 0, "task": ""}),
        json.dumps({**row, "response": [1], "failed": "no"}),
        "[1, 2]",
        good,
    ]
    items = list(iter_awb(lines))
    errors = [i for i in items if isinstance(i, FormatError)]
    rows = [i for i in items if isinstance(i, AwbRow)]
    assert [r.line for r in rows] == [1, 10]
    found = {(e.line, e.field) for e in errors}
    assert (2, "") in found
    assert {(4, "turn_idx"), (4, "prompt"), (5, "system_str")} <= found
    assert {(6, "total_turns"), (6, "prompt"), (7, "turn_idx"), (7, "task")} <= found
    assert {(8, "response"), (8, "failed"), (9, "")} <= found
    assert str(errors[0]).startswith("line 2: invalid JSON")
    with pytest.raises(FormatError):
        read_awb(lines)


def test_episode_rows_reproduce_the_fixture_rows_exactly():
    fixture = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    trajectory = awb_rows_to_trajectories(read_awb(FIXTURE))
    assert len(trajectory) == 1
    t = trajectory[0]
    assert t.domain == "terminal" and t.initial_state == "root@host:/app#"
    assert t.turns[1] == Turn(
        '[\n  {\n    "keystrokes": "cd tests\\n",\n    "duration": 0.1\n  }\n]',
        "root@host:/app# cd tests\nroot@host:/app/tests#",
    )
    rows = episode_to_awb_rows(
        t.turns,
        task=t.task,
        trajectory_id=t.id,
        system_str=t.system_str,
        sections=t.sections,
        fences=t.fences,
        instruction=t.instruction,
    )
    assert rows == fixture
    assert [json.dumps(r) for r in rows] == FIXTURE.read_text().splitlines()


def test_trajectories_group_by_task_and_id_and_tolerate_foreign_prompts():
    rows = episode_to_awb_rows(
        [Turn("a1", "o1"), Turn("a2", "o2")],
        task="agentworld/mcp",
        trajectory_id="x",
        system_str="s",
    )
    other = episode_to_awb_rows(
        [Turn("b1", "p1")], task="search", trajectory_id="x", system_str="s"
    )
    foreign = {**other[0], "id": "y", "prompt": ["free text prompt"], "response": []}
    trajectories = awb_rows_to_trajectories(
        read_awb([json.dumps(r) for r in [rows[1], rows[0], *other, foreign]])
    )
    assert [(t.task, t.id, len(t.turns)) for t in trajectories] == [
        ("agentworld/mcp", "x", 2),
        ("search", "x", 1),
        ("search", "y", 1),
    ]
    assert trajectories[0].domain == "mcp" and trajectories[0].turns[1] == Turn("a2", "o2")
    assert trajectories[2].turns == (Turn("free text prompt", ""),)
