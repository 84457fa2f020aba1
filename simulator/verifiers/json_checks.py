"""JSON results of tool calls (mcp): valid when they look like JSON, and shaped like the
tool's declared ``output_schema``."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from jsonschema import Draft202012Validator

from simulator.domains.mcp import find_tool
from simulator.verifiers.base import VerifierResult, failed, passed

if TYPE_CHECKING:
    from simulator.domains.base import Action
    from simulator.world import World

# Error results are free text on real servers (tau-bench: "Error: user not found").
_ERROR_TEXT = re.compile(r"^\s*(?:error\b|exception\b)", re.IGNORECASE)


def json_valid(observation: str) -> VerifierResult:
    """JSON-looking text must parse; plain text passes (real tools return error strings)."""
    name = "json_valid"
    stripped = observation.strip()
    if stripped.startswith("```"):
        return failed(name, "the result is wrapped in a Markdown code fence")
    if stripped[:1] not in ("{", "["):
        return passed(name, "a plain-text result" if stripped else "an empty result")
    try:
        json.loads(stripped)
    except ValueError as error:
        return failed(name, f"the result looks like JSON but does not parse: {error}")
    return passed(name, "valid JSON")


def output_schema(observation: str, action: Action, world: World) -> VerifierResult | None:
    """The result against the called tool's ``output_schema``; None when none is declared."""
    name = "output_schema"
    tool = find_tool(world, str(action.args.get("name", "")))
    if action.kind != "tool_call" or tool is None or "output_schema" not in tool:
        return None
    if _ERROR_TEXT.match(observation):
        return passed(name, "an error result; the output schema does not apply")
    try:
        value = json.loads(observation)
    except ValueError:
        return failed(
            name, f"{tool['name']!r} declares an output schema but the result is not JSON"
        )
    errors = list(Draft202012Validator(tool["output_schema"]).iter_errors(value))
    if errors:
        first = errors[0]
        return failed(
            name,
            f"the result does not match {tool['name']!r}'s output schema: {first.message} "
            f"(at {first.json_path})",
        )
    return passed(name, f"matches {tool['name']!r}'s output schema")
