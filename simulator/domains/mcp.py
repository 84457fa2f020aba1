"""MCP tool servers: the agent calls a declared tool, the world model returns its result."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from simulator.domains._calls import parse_json_call
from simulator.domains._prompt import build_prompt, dump_json
from simulator.domains._readers import ToolCall, read_tool_calls, sequence
from simulator.domains.base import JSON, TEXT, Action, Domain, ReadAction, unread
from simulator.domains.forms import Composer, ComposerField, ComposerGroup, EditorField
from simulator.errors import InvalidAction

if TYPE_CHECKING:
    from simulator.world import World

_ROLE = """\
You are the world model of an MCP (Model Context Protocol) tool server. An agent calls \
the server's tools; you play the server and every system behind it, and return what \
each tool call would return."""

_RULES = (
    "Return the tool's result exactly as the server would send it: usually one JSON "
    "value, shaped like the tool's output_schema when it declares one.",
    "Results must agree with the resources and with every earlier result: an id created "
    "by one call can be looked up by the next; a record updated stays updated.",
    "When arguments are wrong for the world (an unknown id, a forbidden operation), "
    "return the plain-text error a real server would, e.g. `Error: user not found`.",
)

_FORMAT = """\
A JSON value (object, array, string or number) with no Markdown fences and no \
commentary, or a one-line plain-text error message. A tool with nothing to report \
returns an empty result."""


def tool_list(extras: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The world's tool definitions (``extras["tools"]``); entries that are not objects are skipped."""
    tools = extras.get("tools", [])
    if not isinstance(tools, list):
        return []
    return [tool for tool in tools if isinstance(tool, Mapping)]


def input_schema(tool: Mapping[str, Any]) -> Any:
    """A tool's argument schema; ``parameters`` (OpenAI style) is an alias."""
    return tool.get("input_schema", tool.get("parameters", {"type": "object"}))


def find_tool(world: World, name: str) -> Mapping[str, Any] | None:
    """The tool called ``name`` in ``world``, or None."""
    return next((tool for tool in tool_list(world.extras) if tool.get("name") == name), None)


def _argument_kind(schema: Any) -> str:
    """The JSON type an argument takes (the first non-null one of a union)."""
    kind = schema.get("type", "string") if isinstance(schema, Mapping) else "string"
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return str(kind)


def _properties(tool: Mapping[str, Any]) -> tuple[Mapping[str, Any], set[str]]:
    """A tool's top-level arguments (name -> schema) and the names it requires."""
    schema = input_schema(tool)
    if not isinstance(schema, Mapping):
        return {}, set()
    properties = schema.get("properties", {})
    return (properties if isinstance(properties, Mapping) else {}), set(schema.get("required", []))


def _argument_name(tool: str, name: str) -> str:
    """The composer's name for one argument of one tool (tools may share argument names)."""
    return f"arg__{tool}__{name}"


def _argument_field(tool: str, name: str, schema: Any, required: bool) -> ComposerField:
    """The composer's field for one top-level argument; objects and arrays are JSON text."""
    schema = schema if isinstance(schema, Mapping) else {}
    kind = _argument_kind(schema)
    enum = tuple(str(value) for value in schema.get("enum", []))
    description = str(schema.get("description", ""))
    return ComposerField(
        _argument_name(tool, name),
        name,
        "choice" if enum else "json" if kind in ("object", "array") else "text",
        choices=enum,
        hint=kind,
        placeholder="JSON" if kind in ("object", "array") else description[:60],
        required=required,
    )


def _tool_group(tool: Mapping[str, Any]) -> ComposerGroup:
    name = str(tool.get("name", ""))
    properties, required = _properties(tool)
    return ComposerGroup(
        title=name,
        description=str(tool.get("description", "")),
        fields=tuple(
            _argument_field(name, key, sub, key in required) for key, sub in properties.items()
        ),
    )


def _coerce(value: str, kind: str) -> Any:
    """A typed argument from the composer's text; raises ValueError when it does not fit."""
    if kind == "integer":
        return int(value)
    if kind == "number":
        return float(value)
    if kind == "boolean":
        return value.lower() in ("1", "true", "yes", "on")
    if kind in ("object", "array"):
        return json.loads(value)
    return value


def _read_call(raw: str, call: ToolCall) -> ReadAction:
    notes = call.notes
    if not isinstance(call.arguments, Mapping):
        notes = (*notes, f"the arguments of {call.name!r} are not a JSON object; kept as recorded")
    action = Action(
        raw=raw, kind="tool_call", args={"name": call.name, "arguments": call.arguments}
    )
    return ReadAction(raw=raw, action=action, display=call.display(), notes=notes)


class McpDomain(Domain):
    """Tool calls checked against the world's JSON-Schema tool definitions."""

    name = "mcp"
    title = "MCP tools"
    observation_formats = (JSON, TEXT)
    renderer = JSON
    action_fence = "json"
    json_observations = True
    #: A tool may legitimately return nothing (tau-bench's ``think`` does).
    allows_empty_observation = True
    example_action = '{"name": "<tool>", "arguments": {}}'
    initial_help = "Optional: what the agent sees before its first call."
    editor_fields = (
        EditorField(
            "tools",
            "Tools",
            "json",
            'JSON list: [{"name", "description", "input_schema": <JSON Schema>}, ...]',
        ),
        EditorField("resources", "Resources", "json", "JSON list or object of resources."),
    )

    def system_prompt(self, world: World) -> str:
        tools = [
            {
                key: tool[key]
                for key in ("name", "description", "input_schema", "parameters", "output_schema")
                if key in tool
            }
            for tool in tool_list(world.extras)
        ]
        resources = world.extras.get("resources")
        return build_prompt(
            world,
            role=_ROLE,
            sections=[
                ("Tools (JSON Schema)", dump_json(tools)),
                ("Resources and data behind the tools", dump_json(resources) if resources else ""),
            ],
            rules=_RULES,
            observation_format=_FORMAT,
        )

    def parse_action(self, raw: str, world: World) -> Action:
        try:
            call = parse_json_call(raw)
        except ValueError as error:
            raise InvalidAction(str(error)) from None
        if call is None:
            raise InvalidAction(
                'an mcp action is a JSON tool call: {"name": "<tool>", "arguments": {...}}'
            )
        name, arguments = call
        tool = find_tool(world, name)
        if tool is None:
            known = ", ".join(str(t.get("name")) for t in tool_list(world.extras)) or "none"
            raise InvalidAction(f"unknown tool {name!r}; this world's tools are: {known}")
        validator = Draft202012Validator(input_schema(tool))
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if errors:
            details = "; ".join(f"{e.message} (at {e.json_path})" for e in errors[:3])
            raise InvalidAction(f"arguments of {name!r} do not match its input schema: {details}")
        return Action(raw=raw, kind="tool_call", args={"name": name, "arguments": arguments})

    def read_leniently(self, raw: str) -> ReadAction:
        """Calls to any tool, one or a list, with arguments as an object or JSON text."""
        calls = read_tool_calls(raw)
        if calls is None:
            return unread(
                raw, 'not a JSON tool call such as {"name": "<tool>", "arguments": {...}}'
            )
        return sequence(raw, [_read_call(raw, call) for call in calls])

    def read_action(self, raw: str, world: World | None = None) -> ReadAction:
        """As :meth:`Domain.read_action`; a world without tools checks nothing.

        A recorded trace brings no tool list, so its world has none: every tool it
        calls is then taken as the server's, instead of noted as unknown.
        """
        if world is not None and not tool_list(world.extras):
            world = None
        return super().read_action(raw, world)

    def first_action(self, world: World) -> str:
        """A call of the world's first tool, with no arguments."""
        tools = tool_list(world.extras)
        if not tools:
            return self.example_action
        return json.dumps({"name": tools[0].get("name", "<tool>"), "arguments": {}})

    def composer(self, world: World, observation: str) -> Composer:
        """A tool chooser, and a group of argument fields per tool."""
        groups = tuple(_tool_group(tool) for tool in tool_list(world.extras))
        chooser = ComposerField(
            "tool",
            "Tool",
            "choice",
            choices=tuple(group.title for group in groups),
            placeholder="Choose a tool…",
        )
        return Composer(fields=(chooser,), groups=groups, action_placeholder=self.example_action)

    def compose(self, world: World, fields: Mapping[str, str]) -> str:
        """A JSON call of the chosen tool with the arguments filled in, typed by its schema."""
        tool = find_tool(world, fields.get("tool", "").strip())
        if tool is None:
            return ""
        name = str(tool.get("name", ""))
        arguments = {}
        for key, schema in _properties(tool)[0].items():
            raw = fields.get(_argument_name(name, key), "").strip()
            if not raw:
                continue
            kind = _argument_kind(schema)
            try:
                arguments[key] = _coerce(raw, kind)
            except ValueError as error:
                raise InvalidAction(f"{name}: {key} is not a valid {kind}: {error}") from None
        return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)

    def validate_extras(self, extras: Mapping[str, Any]) -> list[str]:
        problems: list[str] = []
        tools = extras.get("tools", [])
        if not isinstance(tools, list):
            return ["tools: must be a list of tool definitions"]
        seen: set[str] = set()
        for index, tool in enumerate(tools):
            where = f"tools[{index}]"
            if not isinstance(tool, Mapping):
                problems.append(f"{where}: must be an object")
                continue
            name = tool.get("name")
            if not isinstance(name, str) or not name:
                problems.append(f"{where}: name is required text")
            else:
                where = f"{where} {name!r}"
                if name in seen:
                    problems.append(f"{where}: duplicate tool name")
                seen.add(name)
            if not isinstance(tool.get("description", ""), str):
                problems.append(f"{where}: description must be text")
            for key in ("input_schema", "parameters", "output_schema"):
                if key in tool:
                    problems.extend(_schema_problems(tool[key], f"{where}: {key}"))
        resources = extras.get("resources", [])
        if not isinstance(resources, list | Mapping):
            problems.append("resources: must be a list or an object")
        return problems


def _schema_problems(schema: Any, where: str) -> list[str]:
    if not isinstance(schema, Mapping):
        return [f"{where} must be a JSON Schema object"]
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return [f"{where} is not a valid JSON Schema: {error.message}"]
    return []
