from __future__ import annotations

import io
import json

import pytest

from simulator.episode import StepResult, Timings
from simulator.errors import FormatError
from simulator.formats.bundle import Bundle, dump_bundle, load_bundle, validate_bundle
from simulator.formats.sft import SftRecord, dump_sft, episode_to_sft, iter_sft, write_sft
from simulator.formats.trajectory import (
    EpisodeRecord,
    iter_trajectories,
    write_trajectories,
)
from simulator.perturbations import Firing, Perturbation, Trigger
from simulator.scenario import AgentPolicy, Scenario, SuccessCriterion
from simulator.types import Sampling, Usage
from simulator.verifiers import VerifierResult
from simulator.world import World

HARD = [
    "plain",
    "unicode: é 日本語 🙂 \u2028 line sep",
    "ansi: \x1b[1;31mred\x1b[0m and \x07 bell",
    '<html><body><script>alert("x")</script><p class="a">&amp;</p></body></html>',
    "big:" + ("0123456789abcdef\n" * 12_500),  # ~200 KB
]


def world() -> World:
    return World(
        domain="terminal", title="Héllo \x1b[0m", premise="<b>bold</b>", initial_observation="$ "
    )


def scenario() -> Scenario:
    return Scenario(
        title="Find the key",
        task="Find key.txt",
        perturbations=(
            Perturbation("truncation", "enforced", {"max_chars": 10}, Trigger(first_step=2), "cut"),
        ),
        success=(
            SuccessCriterion("regex", pattern=r"KEY-\d+"),
            SuccessCriterion(
                "json_path", path="$.status", value="done", reward=0.5, terminate=False
            ),
            SuccessCriterion("judge", description="the agent found the key"),
        ),
        policy=AgentPolicy("scripted", actions=("ls", "cat key.txt")),
        sampling=Sampling(temperature=0.2, seed=9),
        max_steps=12,
        seed=4,
    )


def steps() -> tuple[StepResult, ...]:
    return tuple(
        StepResult(
            action=f"cat file{i}",
            observation=text,
            reasoning=f"thinking {i} é",
            raw_output=f"<predicted_observation>{text}</predicted_observation>",
            messages=(
                {"role": "system", "content": "sys"},
                {"role": "user", "content": f"cat file{i}"},
            ),
            firings=(Firing(0, "truncation", "enforced", "cut", {"chars_before": 5}),),
            verifiers=(VerifierResult("length_sanity", True, "ok"),),
            timings=Timings(0.1, 0.2, 0.3),
            usage=Usage(10, 5, 2, None),
            finish_reason="stop",
            notes=("n",),
        )
        for i, text in enumerate(HARD)
    )


def test_trajectory_write_read_write_is_byte_identical(tmp_path):
    record = EpisodeRecord(
        world(), steps(), task="t", seed=3, scenario=scenario(), metadata={"by": "é"}
    )
    bare = EpisodeRecord(world(), steps()[:1])
    path = tmp_path / "episodes.jsonl"
    write_trajectories([record, bare], path)
    first = path.read_bytes()
    loaded = list(iter_trajectories(path))
    assert loaded == [record, bare]
    write_trajectories(loaded, path)  # type: ignore[arg-type]
    assert path.read_bytes() == first
    assert len(first) > 200_000
    assert json.loads(first.decode().splitlines()[0])["trajectory_version"] == 1
    assert [t.observation for t in loaded[0].turns()] == HARD  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("{oops", "invalid JSON"),
        ("[]", "must be a JSON object"),
        ('{"trajectory_version": 2}', "trajectory_version: unsupported version 2"),
        ('{"trajectory_version": 1, "world": {}, "steps": {}, "metadata": {}}', "steps: missing"),
        (
            '{"trajectory_version": 1, "world": {"domain": "terminal"}, "steps": [], "metadata": {}}',
            "title",
        ),
        (
            '{"trajectory_version": 1, "world": {"domain": "terminal", "title": "x"}, "steps": [{}], "metadata": {}}',
            "KeyError",
        ),
    ],
)
def test_trajectory_reader_reports_bad_lines_with_numbers(line, fragment):
    items = list(iter_trajectories(["\n", line]))
    assert len(items) == 1 and isinstance(items[0], FormatError)
    assert items[0].line == 2 and fragment in str(items[0])


def test_sft_write_read_write_is_byte_identical():
    with_reasoning = episode_to_sft("sys é", steps(), include_reasoning=True)
    without = episode_to_sft("sys", steps()[:2])
    assert [m["role"] for m in without.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert without.messages[2]["content"] == HARD[0] and without.reasoning is None
    assert "reasoning" not in json.loads(dump_sft(without))
    assert with_reasoning.reasoning == tuple(s.reasoning for s in steps())
    buffer = io.StringIO()
    write_sft([with_reasoning, without], buffer)
    text = buffer.getvalue()
    loaded = list(iter_sft(text.splitlines(keepends=True)))
    assert loaded == [with_reasoning, without]
    again = io.StringIO()
    write_sft(loaded, again)  # type: ignore[arg-type]
    assert again.getvalue() == text


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"x": 1}', "messages"),
        ('{"messages": [{"role": "robot", "content": "x"}]}', "messages"),
        ('{"messages": [], "reasoning": [1]}', "reasoning"),
    ],
)
def test_sft_reader_reports_bad_records(line, field):
    (item,) = iter_sft([line])
    assert isinstance(item, FormatError) and item.field == field and item.line == 1


def test_sft_record_from_dict_accepts_plain_messages():
    assert (
        SftRecord.from_dict({"messages": [{"role": "user", "content": "hi"}]}).messages[0][
            "content"
        ]
        == "hi"
    )


def test_bundle_dump_load_dump_is_byte_identical():
    bundle = Bundle(world(), scenario())
    text = dump_bundle(bundle)
    assert text.endswith("}\n") and '"bundle_version": 1' in text and "é" in text
    loaded = load_bundle(text)
    assert loaded == bundle
    assert dump_bundle(loaded) == text


def test_validate_bundle_lists_every_problem():
    data = {
        "bundle_version": 2,
        "extra": 1,
        "world": {"domain": "nowhere", "title": ""},
        "scenario": {
            "title": "",
            "task": 5,
            "perturbations": [
                {"kind": "nope"},
                {"kind": "truncation", "params": {"max_chars": "x"}},
            ],
            "success": [
                {"kind": "regex", "pattern": "("},
                {"kind": "json_path"},
                {"kind": "vibes"},
                "x",
                {"kind": "judge", "reward": "1", "terminate": 1},
            ],
            "policy": {"kind": "scripted", "actions": []},
            "sampling": 3,
            "max_steps": 0,
            "seed": "s",
        },
    }
    problems = validate_bundle(data)
    for fragment in (
        "bundle_version: expected 1, got 2",
        "bundle: unknown keys ['extra']",
        "world.",
        "scenario.title: required text",
        "scenario.task: must be text",
        "scenario.perturbations[0].kind: unknown kind 'nope'",
        "scenario.perturbations[1].params.max_chars: must be int",
        "scenario.success[0].pattern: invalid regex",
        "scenario.success[1].path: required text",
        "scenario.success[2].kind",
        "scenario.success[3]: must be an object",
        "scenario.success[4].reward: must be a number",
        "scenario.success[4].terminate",
        "scenario.policy.actions: a scripted policy needs at least one action",
        "scenario.sampling: must be an object or null",
        "scenario.max_steps: must be >= 1",
        "scenario.seed: must be an integer",
    ):
        assert any(fragment in p for p in problems), fragment
    assert validate_bundle([]) == ["bundle: must be a JSON object"]
    assert "world: must be an object" in validate_bundle(
        {"bundle_version": 1, "scenario": {"title": "x"}}
    )


def test_load_bundle_errors():
    with pytest.raises(FormatError, match="invalid JSON"):
        load_bundle("{")
    with pytest.raises(FormatError, match="scenario: must be an object"):
        load_bundle(json.dumps({"bundle_version": 1, "world": world().to_dict()}))
