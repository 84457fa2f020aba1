from __future__ import annotations

import json
import random

import pytest

from simulator.backends import ScriptedBackend
from simulator.review.trajectory_judge import (
    MAX_ISSUES,
    TRAJECTORY_DIMENSIONS,
    TrajectoryTurn,
    build_trajectory_messages,
    clip,
    fenced,
    judge_trajectory,
    parse_trajectory_output,
)

GOOD = """<think>turn 2 made notes.txt {"scores": {"state_tracking": 1}} keep it in mind</think>
Turn 2 creates notes.txt; turn 4 lists the directory without it.
<trajectory_evaluation>
```json
{"issues": [{"turn": 4, "earlier_turn": 2, "dimension": "state_tracking",
             "description": "notes.txt is missing from the listing"}],
 "summary": "Forgets a file it created.",
 "scores": {"state_tracking": 2, "consistency": 4, "causality": 4, "fidelity": 3}}
```
</trajectory_evaluation>"""


def scores(**given: int) -> dict[str, int]:
    return {name: given.get(name, 0) for name in TRAJECTORY_DIMENSIONS}


def test_it_reads_scores_issues_and_summary_past_a_thinking_decoy():
    verdict = parse_trajectory_output(GOOD, turn_count=4)
    assert verdict.success and not verdict.notes
    assert dict(verdict.scores) == scores(state_tracking=2, consistency=4, causality=4, fidelity=3)
    assert verdict.total_score == 3.25 and verdict.normalized == 56.25
    (issue,) = verdict.issues
    assert (issue.turn, issue.earlier_turn, issue.dimension) == (4, 2, "state_tracking")
    assert issue.description == "notes.txt is missing from the listing"
    assert verdict.summary == "Forgets a file it created."
    assert verdict.to_dict()["issues"][0]["turn"] == 4


def test_an_unclosed_think_before_the_tag_does_not_hide_the_answer():
    raw = '<think>still thinking {"scores": {"fidelity": 1}}\n<trajectory_evaluation>{"scores": {"fidelity": 5}}</trajectory_evaluation>'
    verdict = parse_trajectory_output(raw)
    assert verdict.success and verdict.scores["fidelity"] == 5


def test_sloppy_json_without_tags_is_repaired():
    raw = (
        "Here it is: {scores: {state_tracking: 4, 'consistency': 5,}, issues: [], summary: 'fine',}"
    )
    verdict = parse_trajectory_output(raw)
    assert verdict.success
    assert dict(verdict.scores) == scores(state_tracking=4, consistency=5)
    assert verdict.total_score == 4.5
    assert "causality: no score given" in verdict.notes
    assert "fidelity: no score given" in verdict.notes


def test_out_of_range_string_and_float_scores_are_read_and_noted():
    raw = (
        '{"scores": {"State Tracking": 7, "consistency": "4/5", "Causality": 3.6, '
        '"fidelity": 0, "realism": 4}}'
    )
    verdict = parse_trajectory_output(raw)
    assert verdict.success
    assert dict(verdict.scores) == scores(state_tracking=5, consistency=4, causality=4)
    assert verdict.total_score == pytest.approx(13 / 3)
    assert "state_tracking: 7 is above 5, read as 5" in verdict.notes
    assert "fidelity: 0 means not scored (as in the turn judge)" in verdict.notes
    assert "unknown dimension 'realism' left out" in verdict.notes


@pytest.mark.parametrize(
    ("value", "note"),
    [
        ('"four"', "fidelity: 'four' is not a score"),
        ("true", "fidelity: True is not a score"),
        ("NaN", "fidelity: nan is not a score"),
        ("Infinity", "fidelity: inf is not a score"),
        ("[5]", "fidelity: list is not a score"),
        ("-2", "fidelity: -2 means not scored (as in the turn judge)"),
    ],
)
def test_unreadable_scores_count_as_not_scored(value, note):
    verdict = parse_trajectory_output(f'{{"scores": {{"fidelity": {value}, "consistency": 3}}}}')
    assert verdict.success and verdict.scores["fidelity"] == 0 and verdict.total_score == 3
    assert note in verdict.notes


def test_odd_issue_entries_are_kept_where_possible_and_noted():
    raw = """{"scores": {"consistency": 2},
      "issues": [
        {"turn": "turn 3", "earlier_turn": "#1", "dimension": "Cross-turn", "problem": "renamed"},
        {"turn": 99, "description": "out of range"},
        "the prompt changes user",
        42,
        {"turn": 2},
        {"turn": 2.0, "earlier_turn": 1, "dimension": "state-tracking", "description": "x"}
      ]}"""
    verdict = parse_trajectory_output(raw, turn_count=5)
    assert [(i.turn, i.earlier_turn, i.dimension, i.description) for i in verdict.issues] == [
        (3, 1, "", "renamed"),
        (None, None, "", "out of range"),
        (None, None, "", "the prompt changes user"),
        (2, 1, "state_tracking", "x"),
    ]
    assert [n for n in verdict.notes if n.startswith("issue")] == [
        "issue 1: unknown dimension 'Cross-turn'",
        "issue 2: turn 99 does not exist",
        "issue 4: not an object, left out",
        "issue 5: no description, left out",
    ]


def test_issues_that_are_not_a_list_and_too_many_issues_are_noted():
    verdict = parse_trajectory_output('{"scores": {"fidelity": 4}, "issues": "none"}')
    assert verdict.issues == () and "issues: not a list, left out" in verdict.notes
    many = [{"description": f"issue {n}"} for n in range(MAX_ISSUES + 5)]
    verdict = parse_trajectory_output(json.dumps({"scores": {"fidelity": 4}, "issues": many}))
    assert len(verdict.issues) == MAX_ISSUES
    assert f"issues: {MAX_ISSUES + 5} listed, the first {MAX_ISSUES} kept" in verdict.notes


def test_broken_json_still_yields_its_scores_with_a_note():
    raw = '{"issues": [{"description": "says "hello" twice"}], "scores": {"fidelity": 4, "causality": 2}}'
    verdict = parse_trajectory_output(raw)
    assert verdict.success and verdict.total_score == 3 and verdict.issues == ()
    assert "the answer's JSON was broken: only its scores could be read" in verdict.notes


def test_a_summary_given_as_a_list_is_joined():
    verdict = parse_trajectory_output(
        '{"scores": {"fidelity": 4}, "summary": ["Good.", "Mostly."]}'
    )
    assert verdict.summary == "Good. Mostly."


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("", "empty output"),
        ("   \n", "empty output"),
        ("The trajectory is fine, I would give it a 4.", "no JSON object found"),
        ('{"verdict": "good"}', "no 'scores' object"),
        ('{"scores": [4, 4, 4, 4]}', "no 'scores' object"),
        ('{"scores": {"fidelity": null, "realism": 5}}', "no dimension scored"),
        ('<think>{"scores": {"fidelity": 5}}</think>', "no JSON object found"),
    ],
)
def test_answers_without_a_score_fail_with_a_clear_error(raw, error):
    verdict = parse_trajectory_output(raw)
    assert not verdict.success and verdict.error == error
    assert verdict.total_score == 0 and verdict.normalized == 0


def test_it_never_raises_on_garbage():
    pieces = [
        '{"scores": {',
        '"fidelity": ',
        "5",
        "}",
        "]",
        "[",
        "<think>",
        "</think>",
        '"',
        "```json",
        "```",
        "<trajectory_evaluation>",
        "NaN",
        ",",
        ":",
        "\\",
        "issues",
        "turn",
    ]
    rng = random.Random(17)
    for _ in range(2000):
        raw = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        verdict = parse_trajectory_output(raw, turn_count=3)
        assert verdict.success == (verdict.total_score > 0)


def test_the_request_fences_every_turn_safely_and_clips_long_observations():
    turns = [
        TrajectoryTurn(1, "touch notes.txt", "", "```\nfake fence\n```"),
        TrajectoryTurn(2, "ls", "notes.txt\n" + "x" * 9000, None),
    ]
    system, user = build_trajectory_messages(
        "terminal", turns, mode="free_running", task="tidy up", initial_observation="$ "
    )
    assert "state_tracking (1-5)" in system["content"]
    text = user["content"]
    assert "## Turn 1" in text and "## Turn 2" in text
    assert "````\n```\nfake fence\n```\n````" in text  # a longer fence around the fence
    assert "(the world model produced no observation for this turn)" in text
    assert "characters left out" in text and "x" * 9000 not in text
    assert "free-running" in text and "tidy up" in text and "## Initial state" in text
    assert text.index("## Turn 1") < text.index("## Turn 2") < text.index("<trajectory_evaluation>")


def test_clip_and_fence_helpers():
    assert clip("short", 10) == "short"
    clipped = clip("a" * 60 + "b" * 40, 30)
    assert clipped.startswith("a" * 20) and clipped.endswith("b" * 10)
    assert "[… 70 characters left out …]" in clipped
    assert fenced("plain") == "```\nplain\n```"
    assert fenced("a ````` b").startswith("``````\n")


async def test_it_asks_once_per_trajectory_and_retries_an_unreadable_answer():
    backend = ScriptedBackend(["I cannot decide.", GOOD])
    turns = [TrajectoryTurn(i, f"cmd {i}", f"real {i}", f"simulated {i}") for i in range(1, 5)]
    verdict = await judge_trajectory(backend, turns, domain="terminal", retry_delay_s=0)
    assert verdict.success and verdict.issues[0].turn == 4
    assert len(backend.requests) == 2  # the unreadable answer was asked again, once
    user = backend.requests[0].messages[1]["content"]
    assert all(f"real {i}" in user and f"simulated {i}" in user for i in range(1, 5))
    assert backend.requests[0].sampling.max_tokens == 32768  # eval.py's judge sampling


async def test_it_gives_up_after_the_retries_with_the_last_error():
    backend = ScriptedBackend(["no verdict here"])
    turns = [TrajectoryTurn(1, "ls", "a", "b")]
    verdict = await judge_trajectory(backend, turns, domain="terminal", max_retries=2)
    assert not verdict.success and verdict.error == "no JSON object found"
    assert len(backend.requests) == 2
    assert not (await judge_trajectory(backend, [], domain="terminal")).success
