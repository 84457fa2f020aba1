from __future__ import annotations

from simulator.backends import ScriptedBackend
from simulator.review.judge import (
    DIMENSIONS,
    STUDIO_JUDGE_USER_TEMPLATE,
    JudgePrompts,
    build_judge_messages,
    clean_marker,
    extract_observation,
    judge_row,
    judge_system_prompt,
    normalize,
    parse_choice,
    parse_judge_output,
    response_marker,
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
    # Trailing commas, single-quoted and bare keys are repaired; "4/5" reads 4, 4.6
    # rounds to 5, 9 clamps to 5, 0 means "not scored" and is left out of the mean.
    raw = 'Verdict: {strengths: ["x"], \'scores\': {format: "4/5", factuality: 4.6, consistency: 9, realism: 0, quality: 2,},}'
    verdict = parse_judge_output(raw)
    assert verdict.success
    assert dict(verdict.scores) == {
        "format": 4,
        "factuality": 5,
        "consistency": 5,
        "realism": 0,
        "quality": 2,
    }
    assert verdict.total_score == 4.0  # (4 + 5 + 5 + 2) / 4
    assert verdict.strengths == ("x",)


def scores_of(raw):
    verdict = parse_judge_output(raw)
    assert verdict.success, verdict.error
    return dict(verdict.scores)


def test_it_reads_scores_as_eval_py_does_on_odd_values():
    raw = '{"scores": {"format": true, "factuality": -2, "consistency": "3 / 5", "realism": "4.5", "quality": null}}'
    # True is the int 1; a negative score is kept as is but not counted; "3 / 5" reads 3;
    # "4.5" is no int, so 0; null is 0.
    verdict = parse_judge_output(raw)
    assert dict(verdict.scores) == {
        "format": 1,
        "factuality": -2,
        "consistency": 3,
        "realism": 0,
        "quality": 0,
    }
    assert verdict.total_score == 2.0  # (1 + 3) / 2
    assert parse_judge_output('{"scores": {"format": 0}}').total_score == 0
    assert not parse_judge_output('{"scores": {"format": NaN}}').success
    assert not parse_judge_output('{"scores": {"format": Infinity}}').success


def test_it_repairs_before_parsing_even_when_that_breaks_a_string():
    # The bare-key repair also rewrites ", b:" inside a string; the object then no longer
    # parses and only its "scores" object is read: the strengths are lost, as in eval.py.
    raw = '{"strengths": ["a, b: c"], "weaknesses": ["w"], "scores": {"format": 3, "quality": 5}}'
    verdict = parse_judge_output(raw)
    assert verdict.success and verdict.total_score == 4.0
    assert verdict.strengths == () and verdict.weaknesses == ()
    # Single-quoted string values are not repaired.
    assert not parse_judge_output("{'scores': {'format': '4'}}").success


def test_it_picks_the_block_eval_py_picks():
    tagged = '<final_evaluation>{"scores": {"format": 1}}</final_evaluation> then <FINAL_EVALUATION>\n{"scores": {"format": 5}}'
    assert scores_of(tagged)["format"] == 5  # last opening tag, unclosed: to the end
    fenced = '```json\n{"scores": {"format": 2}}\n```\n```json\n{"other": 1}\n```'
    assert scores_of(fenced)["format"] == 2  # the last fenced object with "scores"
    objects = 'a {"scores": {"format": 3}} b {"note": "{"} c'
    assert scores_of(objects)["format"] == 3
    empty_tag = '{"scores": {"format": 4}} <final_evaluation>  </final_evaluation>'
    assert scores_of(empty_tag)["format"] == 4  # an empty block: the whole answer is read


def test_it_removes_thinking_like_eval_py():
    nested = '<think>a<think>b</think>{"scores": {"format": 1}}</think>{"scores": {"format": 3}}'
    assert scores_of(nested)["format"] == 3
    orphan_close = '{"scores": {"format": 1}}</Think>{"scores": {"format": 2}}'
    assert scores_of(orphan_close)["format"] == 2
    unclosed_before_tag = (
        '<think>{"scores": {"format": 1}} <final_evaluation>{"scores": {"format": 4}}'
    )
    assert scores_of(unclosed_before_tag)["format"] == 4
    unclosed_to_end = '{"scores": {"format": 2}} <THINK> {"scores": {"format": 5}}'
    assert scores_of(unclosed_to_end)["format"] == 2


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
    assert extract_observation("  plain \n") == "plain"
    assert extract_observation("<think>only thought</think>  ") == "No output"
    assert extract_observation("<PREDICTED_OBSERVATION> a </Predicted_Observation>") == "a"
    last_open = "<predicted_observation>a</predicted_observation><predicted_observation> b "
    assert extract_observation(last_open) == "b"
    assert extract_observation("<predicted_observation> </predicted_observation>") == ""
    assert extract_observation("reasoning</think>\n out ") == "out"


def test_it_strips_the_marker_only_for_eval_py_domains():
    assert clean_marker("**Environment Observation:**\n x ", response_marker("web")) == "x"
    assert clean_marker("a **Environment Observation:** b", response_marker("os")) == "a  b"
    assert clean_marker(" **Environment Observation:** x ", response_marker("lab")) == (
        "**Environment Observation:** x"
    )


ROW = {
    "task": "agentworld/terminal",
    "prompt": ["### Turn 1\n**Action:**\nls", "### Turn 2\n**Action:**\npwd"],
    "response": ["**Environment Observation:**\na b", "**Environment Observation:**\n/app"],
    "current_prompt": "### Turn 2 (current)",
    "turn_idx": 2,
}


def test_it_builds_the_judge_request_with_context_prediction_and_truth():
    system, user = build_judge_messages(ROW, "**Environment Observation:**\n/tmp")
    assert system["content"] == judge_system_prompt("terminal")
    assert "terminal" in system["content"].lower() and "Factuality" in system["content"]
    assert user["content"] == STUDIO_JUDGE_USER_TEMPLATE.format(
        context="# Context (Historical Interactions):\n\n"
        "### Turn 1\n**Action:**\nls\n**Environment Observation:**\na b\n\n",
        world_model_input="# Current Turn:\n\n### Turn 2 (current)",
        predicted_observation="**World Model Output (Simulated):**\n```\n/tmp\n```",
        ground_truth="**Ground Truth (Real Output):**\n```\n/app\n```",
    )
    assert "<final_evaluation>" in user["content"] and '"scores": {"format"' in user["content"]


def test_it_fills_any_template_with_eval_py_fields_and_strips_it():
    prompts = JudgePrompts(
        lambda domain: f"judge {domain}",
        "{context}\n[{world_model_input}]\n{predicted_observation}|{ground_truth}\n\n",
    )
    first = {"task": "mcp", "prompt": "only", "response": "real", "turn_idx": 1}
    system, user = build_judge_messages(first, "sim", prompts)
    assert system == {"role": "system", "content": "judge mcp"}
    # No context on the first turn (the template's leading newline is stripped); the
    # current turn falls back to prompt[turn_idx - 1].
    assert user["content"] == (
        "[# Current Turn:\n\nonly]\n**World Model Output (Simulated):**\n```\nsim\n```|"
        "**Ground Truth (Real Output):**\n```\nreal\n```"
    )


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
    from simulator.review.judge import agreement

    result = agreement([(1, 2), (2, 3), (3, 5), (4, 4)])
    assert result.n == 4
    assert result.mean_abs_diff == 1.0  # (1 + 1 + 2 + 0) / 4
    assert result.pearson == 0.8  # sxy 4 / sqrt(5 * 5)
    assert result.spearman == 0.8
    assert agreement([(3, 3), (3, 4)]).pearson is None
    assert agreement([]).mean_abs_diff is None
