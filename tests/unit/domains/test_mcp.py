"""mcp: tool calls checked with jsonschema against the world's tools; tool schemas validated."""

from __future__ import annotations

import json

import pytest

from simulator.domains import get_domain
from simulator.errors import InvalidAction, InvalidWorld
from simulator.world import World
from tests.unit.verifiers._fixtures import tau_bench_tool_calls

MCP = get_domain("mcp")
_STR = {"type": "string"}
# Schemas written for the tau-bench airline tools that the recorded trajectory calls.
AIRLINE_TOOLS = [
    {
        "name": "get_user_details",
        "input_schema": {
            "type": "object",
            "properties": {"user_id": _STR},
            "required": ["user_id"],
        },
    },
    {
        "name": "search_direct_flight",
        "parameters": {
            "type": "object",
            "properties": {"origin": _STR, "destination": _STR, "date": _STR},
            "required": ["origin", "destination", "date"],
        },
    },
    {
        "name": "search_onestop_flight",
        "input_schema": {
            "type": "object",
            "properties": {"origin": _STR, "destination": _STR, "date": _STR},
            "required": ["origin", "destination", "date"],
        },
    },
    {
        "name": "calculate",
        "input_schema": {
            "type": "object",
            "properties": {"expression": _STR},
            "required": ["expression"],
        },
    },
    {
        "name": "book_reservation",
        "input_schema": {
            "type": "object",
            "properties": {
                "cabin": {"enum": ["basic_economy", "economy", "business"]},
                "flights": {"type": "array", "minItems": 1},
                "total_baggages": {"type": "integer"},
            },
            "required": ["user_id", "flights", "cabin"],
        },
    },
    {"name": "think", "input_schema": {"type": "object", "properties": {"thought": _STR}}},
]
WORLD = World(domain="mcp", title="Airline", extras={"tools": AIRLINE_TOOLS})


def test_it_accepts_every_tool_call_of_the_real_trajectory():
    calls = tau_bench_tool_calls()

    actions = [MCP.parse_action(json.dumps(call), WORLD) for call in calls]

    assert [a.args["name"] for a in actions] == [c["name"] for c in calls]
    assert actions[0].args["arguments"] == {"user_id": "mia_li_3668"}
    assert all(a.kind == "tool_call" for a in actions)


def test_it_accepts_the_plain_and_qwen_wrapped_shapes():
    plain = MCP.parse_action('{"name": "calculate", "arguments": {"expression": "1+1"}}', WORLD)
    wrapped = MCP.parse_action(
        '<tool_call>\n{"name": "calculate", "parameters": {"expression": "2"}}\n</tool_call>', WORLD
    )

    assert plain.args["arguments"] == {"expression": "1+1"}
    assert wrapped.args["arguments"] == {"expression": "2"}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("get_user_details mia", "an mcp action is a JSON tool call"),
        ('{"arguments": {}}', 'a tool call needs a "name"'),
        (
            '{"name": "refund", "arguments": {}}',
            "unknown tool 'refund'; this world's tools are: get_user_details",
        ),
        ('{"name": "calculate", "arguments": {}}', "'expression' is a required property"),
        (
            '{"name": "calculate", "arguments": {"expression": 7}}',
            "7 is not of type 'string' (at $.expression)",
        ),
        (
            '{"name": "book_reservation", "arguments": {"user_id": "u", "flights": [], "cabin": "first"}}',
            "arguments of 'book_reservation' do not match",
        ),
        ('{"name": "calculate", "arguments": "{not json"}', "are text that is not JSON"),
        ('{"name": "calculate", "arguments": [1]}', "must be a JSON object"),
        ("<tool_call>{oops</tool_call>", "the <tool_call> body is not valid JSON"),
    ],
)
def test_it_rejects_bad_calls_with_a_helpful_message(raw, message):
    with pytest.raises(InvalidAction, match=None) as caught:
        MCP.parse_action(raw, WORLD)

    assert message in str(caught.value)


def test_it_validates_tool_schemas_naming_the_tool():
    problems = MCP.validate_extras(
        {
            "tools": [
                {"name": "ok", "input_schema": {"type": "object"}},
                {"name": "bad", "input_schema": {"type": "objekt"}},
                {"name": "ok", "output_schema": {"required": "user_id"}},
                {"description": 3},
                "nope",
                {"name": "arr", "parameters": [1]},
            ],
            "resources": "db",
        }
    )

    assert problems[0].startswith("tools[1] 'bad': input_schema is not a valid JSON Schema:")
    assert "tools[2] 'ok': duplicate tool name" in problems
    assert any(
        p.startswith("tools[2] 'ok': output_schema is not a valid JSON Schema") for p in problems
    )
    assert "tools[3]: name is required text" in problems
    assert "tools[3]: description must be text" in problems
    assert "tools[4]: must be an object" in problems
    assert "tools[5] 'arr': parameters must be a JSON Schema object" in problems
    assert "resources: must be a list or an object" in problems
    assert MCP.validate_extras({"tools": {}}) == ["tools: must be a list of tool definitions"]


def test_a_world_with_a_broken_tool_schema_does_not_load():
    data = WORLD.to_dict() | {"extras": {"tools": [{"name": "x", "input_schema": {"type": 5}}]}}

    with pytest.raises(
        InvalidWorld, match="tools\\[0\\] 'x': input_schema is not a valid JSON Schema"
    ):
        World.from_dict(data)


def test_it_declares_json_observations():
    assert MCP.json_observations
    assert MCP.renderer == "json"
    assert MCP.detect_format("Error: payment amount does not add up") == "text"
