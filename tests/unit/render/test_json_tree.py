from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.render import render_json
from tests.unit.render.parsed import parse

TRAJECTORY = (
    Path(__file__).parents[2] / "fixtures" / "mcp" / "tau_bench_airline_gpt-4o_record0_task0.json"
)
TOOL_RESULTS = [
    message["content"]
    for message in json.loads(TRAJECTORY.read_text())["traj"]
    if message.get("role") == "tool"
]
JSON_RESULTS = [text for text in TOOL_RESULTS if text.strip()[:1] in ("{", "[")]


def _members(value) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_members(v) for v in value.values())
    if isinstance(value, list):
        return len(value) + sum(_members(v) for v in value)
    return 0


def _containers(value) -> int:
    if isinstance(value, dict):
        return 1 + sum(_containers(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_containers(v) for v in value)
    return 0


@pytest.mark.parametrize("result", JSON_RESULTS, ids=lambda text: text[:20])
def test_it_renders_real_tool_results_as_a_tree(result):
    value = json.loads(result)
    parsed = parse(render_json(result))

    assert len(parsed.find("li")) == _members(value)
    assert len(parsed.find("details")) == _containers(value)


def test_it_shows_keys_and_values_styled_by_type():
    assert len(JSON_RESULTS) >= 4
    parsed = parse(render_json(JSON_RESULTS[1]))

    keys = {span.text for span in parsed.find("span", "key")}
    assert {'"flight_number"', '"origin"', '"available_seats"'} <= keys
    assert '"HAT069"' in {span.text for span in parsed.find("span", "str")}
    assert "17" in {span.text for span in parsed.find("span", "num")}


def test_it_folds_deep_containers_and_counts_members():
    parsed = parse(render_json('{"a": {"b": {"c": {"d": [1]}}}, "e": []}'))

    details = parsed.find("details")
    assert ["open" in d.attrs for d in details] == [True, True, True, False, False, True]
    assert [s.text for s in parsed.find("span", "count")] == [
        "2 keys",
        "1 key",
        "1 key",
        "1 key",
        "1 item",
        "0 items",
    ]


def test_it_keeps_duplicate_keys_and_styles_literals():
    parsed = parse(render_json('{"k": true, "k": null, "n": -1.5e3, "s": "<\\u00e9>"}'))

    assert [s.text for s in parsed.find("span", "key")] == ['"k"', '"k"', '"n"', '"s"']
    assert [s.text for s in parsed.find("span", "bool")] == ["true"]
    assert [s.text for s in parsed.find("span", "null")] == ["null"]
    assert [s.text for s in parsed.find("span", "num")] == ["-1500.0"]
    assert [s.text for s in parsed.find("span", "str")] == ['"<\u00e9>"']


@pytest.mark.parametrize("text", ["Error: payment amount does not add up", "", "[" * 100_000])
def test_it_shows_invalid_json_as_text(text):
    parsed = parse(render_json(text))

    assert parsed.find("pre")[0].text == text
    assert not parsed.find("details")


def test_it_renders_a_bare_scalar():
    assert [s.text for s in parse(render_json("255.0")).find("span", "num")] == ["255.0"]
