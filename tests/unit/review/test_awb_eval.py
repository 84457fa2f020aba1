from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path

from simulator.backends import ReplayBackend, ScriptedBackend
from simulator.formats.awb import infer_messages, read_awb
from simulator.review.awb_eval import (
    RecordedTurn,
    aggregate,
    format_report,
    infer_row,
    read_rows,
    run_rows,
    simulate_trace,
)
from simulator.world import World

FIXTURE = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "agentworldbench"
    / "synthetic_terminal.jsonl"
)


def judged(task, failed, scores, **extra):
    row = {"task": task, "id": len(scores), "turn_idx": 1}
    if failed is not None:
        row["failed"] = failed
    names = ["format", "factuality", "consistency", "realism", "quality"]
    row.update(dict(zip(names, scores, strict=True)))
    given = [s for s in scores if s > 0]
    row["total_score"] = sum(given) / len(given) if given else 0
    row.update(extra)
    return row


# Built by hand; the expected numbers are worked out in the comments.
JUDGED = [
    judged("terminal", 0.0, [5, 4, 3, 4, 4]),  # total 4.0
    judged("terminal", 0.0, [3, 3, 3, 3, 3]),  # total 3.0
    judged("terminal", 1.0, [0, 0, 0, 0, 0]),  # failed: left out
    judged("agentworld/mcp", 0.0, [5, 5, 5, 5, 5]),  # total 5.0
    judged("agentworld/mcp", 0.0, [0, 4, 4, 4, 4]),  # format not scored; total 4.0
    judged("agentworld/mcp", None, [5, 5, 5, 5, 5]),  # no "failed" key: invalid, as in eval.py
    judged("search", 0.0, [4, 4, 3, 4, 4]),  # total 3.8
    judged("search", 0.0, [3, 3, 4, 3, 3]),  # total 3.2
    judged("search", 0.0, [3, 3, 3, 3, 4]),  # total 3.2
]

EXPECTED = """
======================================================================
AgentWorldBench Evaluation Results
======================================================================

--- MCP (2/3 valid, 1 failed) ---
           format: 100.00
       factuality: 87.50
      consistency: 87.50
          realism: 87.50
          quality: 87.50
      total_score: 87.50

--- Search (3/3 valid, 0 failed) ---
           format: 58.33
       factuality: 58.33
      consistency: 58.33
          realism: 58.33
          quality: 66.67
      total_score: 60.00

--- Terminal (2/3 valid, 1 failed) ---
           format: 75.00
       factuality: 62.50
      consistency: 50.00
          realism: 62.50
          quality: 62.50
      total_score: 62.50

======================================================================
Overall: 68.57
Total samples: 9, Valid: 7, Failed: 2
======================================================================
"""


def test_it_aggregates_like_eval_py_per_domain_and_overall():
    result = aggregate(JUDGED)
    # Overall is over rows, not domains: normalize(mean(4, 3, 5, 4, 3.8, 3.2, 3.2))
    # = (26.2 / 7 - 1) / 4 * 100 = 68.5714...; the mean of the three domains would be 70.0.
    assert format_report(result) == EXPECTED
    assert [d.domain for d in result.domains] == ["mcp", "search", "terminal"]


def test_it_prints_no_valid_results_and_no_overall_when_everything_failed():
    report = format_report(aggregate([judged("web", 1.0, [0, 0, 0, 0, 0])]))
    assert "--- Web (0/1 valid, 1 failed) ---\n  No valid results." in report
    assert "Overall" not in report


def test_it_builds_the_infer_request_like_eval_py():
    rows = [r.data for r in read_awb(FIXTURE)]
    third = rows[2]
    messages = infer_messages(third)
    assert messages[0] == {"role": "system", "content": third["system_str"]}
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"] == third["prompt"][0]
    assert messages[2]["content"] == third["response"][0]
    assert messages[-1]["content"] == third["prompt"][2]


async def test_it_adds_gen_and_keeps_an_empty_gen_when_the_call_fails():
    row = read_awb(FIXTURE)[0].data
    out = await infer_row(
        ScriptedBackend(["<predicted_observation>x</predicted_observation>"]), row
    )
    assert out["gen"] == "<predicted_observation>x</predicted_observation>"
    assert list(out)[:-1] == list(row)

    class Broken(ScriptedBackend):
        async def stream(self, request):
            raise OSError("down")
            yield

    assert (await infer_row(Broken(["x"]), row))["gen"] == ""


async def test_it_runs_rows_concurrently_and_resumes_from_the_output(tmp_path):
    rows = [{"task": "terminal", "id": i, "turn_idx": 1} for i in range(20)]
    calls = []

    async def work(row):
        calls.append(row["id"])
        await asyncio.sleep(0.05)
        return {**row, "gen": f"g{row['id']}"}

    out = tmp_path / "predictions.jsonl"
    out.write_text(json.dumps({**rows[3], "gen": "old"}) + "\n")
    started = time.monotonic()
    summary = await run_rows(rows, work, output=out, concurrency=20, progress=io.StringIO())
    assert time.monotonic() - started < 0.05 * 19  # overlapping, not one at a time
    assert summary.skipped == 1 and summary.done == 19
    assert 3 not in calls
    written = read_rows(out)
    assert [r["id"] for r in written] == list(range(20))
    assert written[3]["gen"] == "old"


async def test_it_simulates_a_trace_teacher_forced_with_the_awb_request_form():
    rows = read_awb(FIXTURE)
    last = rows[-1]
    from simulator.formats.awb import trajectory_of

    trajectory = trajectory_of(last)
    turns = [RecordedTurn(t.action, t.observation) for t in trajectory.turns]
    world = World(domain="terminal", title="t", initial_observation=trajectory.initial_state or "")
    sent = []

    def answer(request):
        sent.append(request.messages)
        return "simulated"

    results = await simulate_trace(
        world, turns, ReplayBackend(answer), rows=[row.data for row in rows]
    )
    assert [r.result.observation for r in results if r.result] == ["simulated"] * 3
    assert [list(m) for m in sent] == [infer_messages(row.data) for row in rows]
    assert all(r.real_verifiers for r in results)


async def test_it_feeds_simulated_history_when_free_running():
    world = World(domain="terminal", title="t")
    turns = [RecordedTurn("ls", "real-1"), RecordedTurn("pwd", "real-2")]
    sent = []

    def answer(request):
        sent.append(request.messages)
        return f"sim-{len(sent)}"

    await simulate_trace(world, turns, ReplayBackend(answer), mode="free_running")
    assert sent[1][2]["content"] == "sim-1"
    sent.clear()
    await simulate_trace(world, turns, ReplayBackend(answer), mode="teacher_forced")
    assert sent[1][2]["content"] == "real-1"


async def test_it_resumes_only_rows_saved_from_the_same_input_and_can_start_over(tmp_path):
    rows = [{"task": "terminal", "id": i, "turn_idx": 1, "gen": f"new{i}"} for i in range(3)]
    out = tmp_path / "judged.jsonl"
    saved = [{**rows[0], "total_score": 1.0}, {**rows[1], "gen": "stale", "total_score": 2.0}]
    out.write_text("".join(json.dumps(r) + "\n" for r in saved))

    async def work(row):
        return {**row, "total_score": 5.0}

    summary = await run_rows(rows, work, output=out, progress=io.StringIO())
    # Row 1 was saved for another generation: judged again, not reused.
    assert [r["total_score"] for r in read_rows(out)] == [1.0, 5.0, 5.0]
    assert summary.skipped == 1
    summary = await run_rows(rows, work, output=out, progress=io.StringIO(), resume=False)
    assert summary.skipped == 0
    assert [r["total_score"] for r in read_rows(out)] == [5.0, 5.0, 5.0]


def test_it_loads_a_data_dir_like_eval_py(tmp_path):
    (tmp_path / "web_test.jsonl").write_text('{"n": 3}\n')
    (tmp_path / "mcp_test.jsonl").write_text('  {"n": 1}  \n\n   \n{"n": 2}')
    (tmp_path / "mcp_train.jsonl").write_text('{"n": 99}\n')
    (tmp_path / "notes.txt").write_text("x")
    from simulator.review.awb_eval import load_data

    assert load_data(tmp_path) == [{"n": 1}, {"n": 2}, {"n": 3}]
