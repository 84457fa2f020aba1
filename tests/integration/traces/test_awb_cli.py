"""``manage.py awb infer|judge|score`` with eval.py's flags, against the recording test server.

The expected requests are built here, independently, by eval.py's documented
algorithm (written out below), not by the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from simulator.review.judge import STUDIO_JUDGE_USER_TEMPLATE, judge_system_prompt
from simulator.serve import ServerOptions
from simulator.serve.replies import scripted_observation
from simulator.serve.threaded import start_server_in_thread
from simulator.types import Message

MARKER = "**Environment Observation:**"
DIMENSIONS = ["format", "factuality", "consistency", "realism", "quality"]
JUDGE_ANSWER = (
    "Step by step... <final_evaluation>\n```json\n"
    '{"strengths": ["shape"], "weaknesses": ["value"], '
    '"scores": {"format": 4, "factuality": 2, "consistency": 3, "realism": 4, "quality": 3}}\n'
    "```\n</final_evaluation>"
)
# Our own template text, standing in for the checkout's constant.
TEMPLATE = (
    "{context}\n\n{world_model_input}\n\n{predicted_observation}\n\n{ground_truth}\n\n"
    "Grade the simulation from 1 to 5 per dimension; answer in <final_evaluation> tags."
)
MCP_ROWS: list[dict[str, Any]] = [
    {
        "task": "mcp",
        "id": "a",
        "prompt": ['### Turn 1\n**Action:**\n{"tool": "list"}'],
        "response": [f'{MARKER}\n{{"items": []}}'],
        "current_prompt": '### Turn 1\n**Action:**\n{"tool": "list"}',
        "system_str": "You simulate tools.",
        "turn_idx": 1,
    },
    {
        "task": "agentworld/mcp",
        "id": "b",
        "prompt": ["### Turn 1\n**Action:**\nopen café", "### Turn 2\n**Action:**\nread"],
        "response": [f"{MARKER}\nopened", f"{MARKER}\ncontents"],
        "current_prompt": "### Turn 2 (as shown)",
        "system_str": "You simulate tools.",
        "turn_idx": 2,
    },
]
TERMINAL_ROWS: list[dict[str, Any]] = [
    {
        "task": "terminal",
        "id": 7,
        "prompt": ["### Turn 1\n**Action:**\nls", "### Turn 2\n**Action:**\npwd"],
        "response": [f"{MARKER}\na b", f"{MARKER}\n/app"],
        "current_prompt": "",
        "turn_idx": 2,
    }
]


# ── eval.py's algorithm, written out ────────────────────────────────────────────


def eval_infer_messages(job: dict[str, Any]) -> list[Message]:
    turn = job["turn_idx"] - 1
    messages: list[Message] = []
    if job.get("system_str", ""):
        messages.append({"role": "system", "content": job["system_str"]})
    for prompt, response in zip(job["prompt"][:turn], job["response"][:turn], strict=False):
        messages += [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": response},
        ]
    messages.append({"role": "user", "content": job["prompt"][turn]})
    return messages


def eval_clean(text: str) -> str:
    return (
        text[len(MARKER) :].strip() if text.startswith(MARKER) else text.replace(MARKER, "").strip()
    )


def eval_output(gen: str) -> str:
    """eval.py's parse_model_output for the generations here: no thinking, one closed tag."""
    return gen.split("<predicted_observation>")[-1].split("</predicted_observation>")[0].strip()


def eval_judge_messages(job: dict[str, Any], system: str, template: str) -> list[dict[str, str]]:
    output = eval_output(job["gen"])
    turn = max(job.get("turn_idx", 1) - 1, 0)
    prompts, responses = job["prompt"], job["response"]
    context = ""
    for i in range(turn):
        context += prompts[i] + "\n" + responses[i] + "\n\n"
    if context:
        context = f"# Context (Historical Interactions):\n\n{context}"
    current = job.get("current_prompt", "") or prompts[turn]
    user = template.format(
        context=context,
        world_model_input=f"# Current Turn:\n\n{current}",
        predicted_observation=f"**World Model Output (Simulated):**\n```\n{eval_clean(output)}\n```",
        ground_truth=f"**Ground Truth (Real Output):**\n```\n{eval_clean(responses[turn])}\n```",
    ).strip()
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# ── Fixtures ────────────────────────────────────────────────────────────────────


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n\n" for r in rows))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "AgentWorldBench"
    folder.mkdir()
    write_jsonl(folder / "terminal_test.jsonl", TERMINAL_ROWS)
    write_jsonl(folder / "mcp_test.jsonl", MCP_ROWS)
    write_jsonl(folder / "web_train.jsonl", [{**TERMINAL_ROWS[0], "id": 99}])  # not *_test.jsonl
    (folder / "os_test.json").write_text("not read")
    return folder


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A prompts folder shaped like Qwen-AgentWorld's, with tiny texts of our own."""
    prompts = tmp_path / "Qwen-AgentWorld" / "prompts"
    for domain in ("mcp", "terminal"):
        (prompts / domain).mkdir(parents=True)
        (prompts / domain / "judge_system_prompt.txt").write_text(f"Grade {domain} output.\n")
    utils = tmp_path / "Qwen-AgentWorld" / "eval" / "lwm_eval_utils"
    utils.mkdir(parents=True)
    (utils / "task_configs.py").write_text(
        f"SCORE_DIMENSIONS = []\nJUDGE_USER_PROMPT = {TEMPLATE!r}\n"
    )
    return prompts


def infer(data_dir: Path, out: Path) -> list[dict[str, Any]]:
    """Run ``awb infer`` as eval.py's README does; returns the recorded request bodies."""
    with start_server_in_thread() as server:
        call_command(
            "awb",
            "infer",
            "--data-dir",
            str(data_dir),
            "--model-base-url",
            server.base_url + "/v1",
            "--model-name",
            "m",
            "--output-dir",
            str(out),
        )
        return list(server.state.requests)


def rows_in(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


REPORT = """
======================================================================
AgentWorldBench Evaluation Results
======================================================================

--- MCP (1/2 valid, 1 failed) ---
           format: 75.00
       factuality: 25.00
      consistency: 50.00
          realism: 75.00
          quality: 50.00
      total_score: 55.00

--- Terminal (1/1 valid, 0 failed) ---
           format: 75.00
       factuality: 25.00
      consistency: 50.00
          realism: 75.00
          quality: 50.00
      total_score: 55.00

======================================================================
Overall: 55.00
Total samples: 3, Valid: 2, Failed: 1
======================================================================
"""


# ── Tests ───────────────────────────────────────────────────────────────────────


def test_infer_judge_score_with_eval_py_flags_and_official_prompts(
    data_dir: Path, checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    bodies = infer(data_dir, out)

    rows = MCP_ROWS + TERMINAL_ROWS  # files in name order, lines in file order
    expected = [
        {"model": "m", "messages": eval_infer_messages(r), "max_tokens": 32768, "temperature": 0.6}
        for r in rows
    ]
    key = lambda body: json.dumps(body, sort_keys=True)  # noqa: E731 (requests run concurrently)
    assert sorted(bodies, key=key) == sorted(expected, key=key)
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    predicted = [{**r, "gen": scripted_observation(eval_infer_messages(r))} for r in rows]
    assert lines == [json.dumps(p, ensure_ascii=False) for p in predicted]
    assert capsys.readouterr().out == ""  # eval.py infer prints nothing on stdout

    predicted[0]["gen"] = ""  # a row whose inference failed
    write_jsonl(out / "predictions.jsonl", predicted)
    with start_server_in_thread(ServerOptions(replay=[JUDGE_ANSWER])) as judge:
        call_command(
            "awb",
            "judge",
            "--predictions",
            str(out / "predictions.jsonl"),
            "--judge-base-url",
            judge.base_url + "/v1",
            "--judge-model",
            "j",
            "--output-dir",
            str(out),
            "--official-prompts",
            str(checkout),
        )
        bodies = list(judge.state.requests)
    assert capsys.readouterr().out == REPORT

    judged_rows = [p for p in predicted if p["gen"]]
    expected = [
        {
            "model": "j",
            "messages": eval_judge_messages(
                p, f"Grade {p['task'].split('/')[-1]} output.\n", TEMPLATE
            ),
            "max_tokens": 32768,
            "temperature": 0.6,
        }
        for p in judged_rows
    ]
    assert sorted(bodies, key=key) == sorted(expected, key=key)

    judged = rows_in(out / "judged.jsonl")
    assert judged[0] == {**predicted[0], "failed": 1.0, "error_message": "No model generation"}
    raw = f"<predicted_observation>{JUDGE_ANSWER}</predicted_observation>"
    for row, source in zip(judged[1:], predicted[1:], strict=True):
        added = {
            "total_score": 3.2,
            "format": 4,
            "factuality": 2,
            "consistency": 3,
            "realism": 4,
            "quality": 3,
            "failed": 0.0,
            "strengths": ["shape"],
            "weaknesses": ["value"],
            "extracted_output": eval_output(source["gen"]),
            "judge_raw_output": raw,
        }
        assert list(row.items()) == list({**source, **added}.items())  # eval.py's key order

    call_command("awb", "score", "--predictions", str(out / "judged.jsonl"))
    assert capsys.readouterr().out == REPORT


def test_judge_without_official_prompts_uses_the_studio_texts_in_the_same_layout(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STUDIO_AGENTWORLD_PROMPTS", raising=False)
    out = tmp_path / "results"
    infer(data_dir, out)
    with start_server_in_thread(ServerOptions(replay=["no verdict"])) as judge:
        call_command(
            "awb",
            "judge",
            "--predictions",
            str(out / "predictions.jsonl"),
            "--judge-base-url",
            judge.base_url,
            "--judge-model",
            "j",
            "--output-dir",
            str(out),
            "--max-tokens",
            "512",
            "--temperature",
            "0",
            "--max-retries",
            "2",
        )
        bodies = list(judge.state.requests)
    predicted = rows_in(out / "predictions.jsonl")
    terminal = predicted[-1]
    expected = {
        "model": "j",
        "messages": eval_judge_messages(
            terminal, judge_system_prompt("terminal"), STUDIO_JUDGE_USER_TEMPLATE
        ),
        "max_tokens": 512,
        "temperature": 0.0,
    }
    assert sum(body == expected for body in bodies) == 2  # asked again when it did not parse
    assert len(bodies) == 2 * len(predicted)
    failed = rows_in(out / "judged.jsonl")[-1]
    assert list(failed.items()) == list(
        {
            **terminal,
            "total_score": 0,
            "failed": 1.0,
            "error_message": "Judge scoring failed",
            "extracted_output": eval_output(terminal["gen"]),
        }.items()
    )


def test_a_missing_official_prompt_file_stops_before_any_call(
    data_dir: Path, checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "results"
    infer(data_dir, out)
    (checkout / "mcp" / "judge_system_prompt.txt").unlink()
    monkeypatch.setenv("STUDIO_AGENTWORLD_PROMPTS", str(checkout))  # the flag's default
    with start_server_in_thread(ServerOptions(replay=[JUDGE_ANSWER])) as judge:
        with pytest.raises(CommandError, match=r"mcp/judge_system_prompt\.txt: no such file"):
            call_command(
                "awb",
                "judge",
                "--predictions",
                str(out / "predictions.jsonl"),
                "--judge-base-url",
                judge.base_url,
                "--judge-model",
                "j",
                "--output-dir",
                str(out),
            )
        assert not judge.state.requests
    assert not (out / "judged.jsonl").exists()
