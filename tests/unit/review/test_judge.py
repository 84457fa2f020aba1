from __future__ import annotations

from simulator.backends import ScriptedBackend
from simulator.judge import (
    DIMENSIONS,
    build_judge_messages,
    extract_observation,
    judge_row,
    judge_system_prompt,
    normalize,
    parse_choice,
    parse_judge_output,
)

GOOD = """<think>format looks {"scores": {"format": 1}} fine</think>
Reasoning...
<final_evaluation>
```json
{"strengths": ["prompt right"], "weaknesses": ["path wrong"],
 "scores": {"format": 5, "factuality": 3, "consistency": 4, "realism": 4, "quality": 4}}
```
</final_evaluation>"""


def test_it_parses_the_final_evaluation_and_averages_on_one_to_five():
    verdict = parse_judge_output(GOOD)
    assert verdict.success
    assert dict(verdict.scores) == {
        "format": 5,
        "factuality": 3,
        "consistency": 4,
        "realism": 4,
        "quality": 4,
    }
    assert verdict.total_score == 4.0
    assert verdict.normalized == 75.0
    assert verdict.strengths == ("prompt right",)


def test_it_survives_sloppy_json_and_string_scores():
    raw = "Verdict: {strengths: 'x', 'scores': {format: '4/5', factuality: 4.6, consistency: 9, realism: 0, quality: 2,},}"
    verdict = parse_judge_output(raw)
    assert verdict.success
    assert dict(verdict.scores) == {
        "format": 4,
        "factuality": 5,
        "consistency": 5,
        "realism": 0,
        "quality": 2,
    }
    assert verdict.total_score == 4.0  # realism 0 = not scored, left out


def test_it_fails_cleanly_on_answers_without_scores():
    for raw in [
        "",
        "I think it is good.",
        '{"verdict": "good"}',
        "<final_evaluation>```json\n{broken",
    ]:
        verdict = parse_judge_output(raw)
        assert not verdict.success
        assert verdict.error


def test_it_extracts_the_last_predicted_observation_outside_thinking():
    gen = "<think>maybe <predicted_observation>fake</predicted_observation></think>ok <predicted_observation>\nreal\n</predicted_observation>"
    assert extract_observation(gen) == "real"
    assert extract_observation("<think>unclosed <predicted_observation>kept") == "kept"
    assert extract_observation("") == "No output"
    assert extract_observation("plain") == "plain"


def test_it_builds_the_judge_request_with_context_prediction_and_truth():
    row = {
        "task": "agentworld/terminal",
        "prompt": ["### Turn 1\n**Action:**\nls", "### Turn 2\n**Action:**\npwd"],
        "response": ["**Environment Observation:**\na b", "**Environment Observation:**\n/app"],
        "current_prompt": "### Turn 2\n**Action:**\npwd",
        "turn_idx": 2,
    }
    system, user = build_judge_messages(row, "/tmp")
    assert system["content"] == judge_system_prompt("terminal")
    assert "terminal" in system["content"].lower() and "Factuality" in system["content"]
    assert "### Turn 1\n**Action:**\nls\n**Environment Observation:**\na b" in user["content"]
    assert "```\n/tmp\n```" in user["content"] and "```\n/app\n```" in user["content"]
    assert user["content"].index("/tmp") < user["content"].index("/app")
    assert "<final_evaluation>" in user["content"]


async def test_it_judges_a_row_with_retries_and_writes_eval_py_fields():
    row = {
        "task": "terminal",
        "id": 1,
        "turn_idx": 1,
        "prompt": ["p"],
        "response": ["r"],
        "gen": "<predicted_observation>o</predicted_observation>",
    }
    backend = ScriptedBackend(["no json here", GOOD])
    out = await judge_row(backend, row, retry_delay_s=0)
    assert len(backend.requests) == 2
    assert out["failed"] == 0.0 and out["total_score"] == 4.0
    assert [out[d] for d in DIMENSIONS] == [5, 3, 4, 4, 4]
    assert out["extracted_output"] == "o" and out["judge_raw_output"] == GOOD
    failed = await judge_row(ScriptedBackend(["nothing"]), row, retry_delay_s=0)
    assert failed["failed"] == 1.0 and failed["total_score"] == 0
    assert failed["error_message"] == "Judge scoring failed"
    none = await judge_row(ScriptedBackend(["x"]), {**row, "gen": ""})
    assert none["failed"] == 1.0 and none["error_message"] == "No model generation"


def test_it_reads_turing_choices():
    assert parse_choice("A looks fake... \\boxed{B}") == "B"
    assert parse_choice("<think>\\boxed{A}</think> final answer: B") == "B"
    assert parse_choice("no idea") is None


def test_normalize_maps_one_to_five_onto_zero_to_hundred():
    assert [normalize(x) for x in (1, 3, 5)] == [0, 50, 100]


def test_agreement_gives_mad_pearson_and_spearman():
    from simulator.judge import agreement

    result = agreement([(1, 2), (2, 3), (3, 5), (4, 4)])
    assert result.n == 4
    assert result.mean_abs_diff == 1.0  # (1 + 1 + 2 + 0) / 4
    assert result.pearson == 0.8  # sxy 4 / sqrt(5 * 5)
    assert result.spearman == 0.8
    assert agreement([(3, 3), (3, 4)]).pearson is None
    assert agreement([]).mean_abs_diff is None
