"""The action composer: a form that fits the domain, composed into one action text.

The page sends the form's fields (over the WebSocket, or to the validate view);
:func:`compose_action` turns them into the action string the domain parses. A
non-empty free-text ``action`` field always wins, so any action can be typed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from simulator.domains.mcp import input_schema, tool_list
from simulator.prompting import domain_for
from simulator.world import World

WEB_VERBS = ("click", "fill", "hover", "press", "select_option", "focus", "clear", "dblclick")
WEB_GLOBAL = ("goto", "go_back", "go_forward", "scroll", "noop", "send_msg_to_user")
ANDROID_TYPES = (
    "click",
    "long_press",
    "input_text",
    "scroll",
    "swipe",
    "open_app",
    "navigate_back",
    "navigate_home",
    "keyboard_enter",
    "wait",
    "status",
    "answer",
)
OS_ACTIONS = (
    "click",
    "doubleClick",
    "rightClick",
    "moveTo",
    "typewrite",
    "press",
    "hotkey",
    "scroll",
)
OS_SPECIALS = ("DONE", "FAIL", "WAIT")


def _field(schema: Mapping[str, Any], name: str, required: bool) -> dict[str, Any]:
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return {
        "name": name,
        "type": kind,
        "required": required,
        "enum": [str(v) for v in schema.get("enum", [])],
        "description": str(schema.get("description", "")),
    }


def mcp_tools(world: World) -> list[dict[str, Any]]:
    """Each tool with a form field per top-level argument (objects/arrays are JSON text)."""
    tools = []
    for tool in tool_list(world.extras):
        schema = input_schema(tool)
        properties = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
        required = set(schema.get("required", [])) if isinstance(schema, Mapping) else set()
        tools.append(
            {
                "name": str(tool.get("name", "")),
                "description": str(tool.get("description", "")),
                "fields": [
                    _field(sub if isinstance(sub, Mapping) else {}, name, name in required)
                    for name, sub in properties.items()
                ],
            }
        )
    return tools


def composer_context(world: World, observation: str) -> dict[str, Any]:
    """What the composer template shows for this world and the current observation."""
    domain = domain_for(world)
    context: dict[str, Any] = {"composer": domain.name}
    if domain.name == "mcp":
        context["tools"] = mcp_tools(world)
    elif domain.name in ("web", "android"):
        ids_in = getattr(domain, "ids_in", None)
        ids = sorted(ids_in(observation) if ids_in else (), key=lambda v: (len(v), v))
        context["element_ids"] = ids[:500]
        context["verbs"] = WEB_VERBS + WEB_GLOBAL if domain.name == "web" else ANDROID_TYPES
    elif domain.name == "os":
        context["verbs"] = OS_ACTIONS
        context["specials"] = OS_SPECIALS
    return context


def _coerce(value: str, kind: str) -> Any:
    if kind == "integer":
        return int(value)
    if kind == "number":
        return float(value)
    if kind == "boolean":
        return value.lower() in ("1", "true", "yes", "on")
    if kind in ("object", "array"):
        return json.loads(value)
    return value


def _quote(text: str) -> str:
    return repr(text)


def compose_action(world: World, fields: Mapping[str, Any]) -> str:
    """The action text for the composer's fields (raises ValueError on unusable input)."""
    free = str(fields.get("action", "") or "").strip()
    if free:
        return free
    domain = world.domain

    def get(name: str) -> str:
        return str(fields.get(name, "") or "").strip()

    if domain == "mcp":
        tool = next((t for t in mcp_tools(world) if t["name"] == get("tool")), None)
        if tool is None:
            return ""
        arguments = {}
        for field in tool["fields"]:
            raw = get(f"arg__{tool['name']}__{field['name']}")
            if raw:
                arguments[field["name"]] = _coerce(raw, field["type"])
        return json.dumps({"name": tool["name"], "arguments": arguments}, ensure_ascii=False)
    if domain == "web":
        verb, bid, value = get("verb"), get("element"), str(fields.get("value", "") or "")
        if verb in ("fill", "press", "select_option"):
            return f"{verb}({_quote(bid)}, {_quote(value)})"
        if verb == "goto":
            return f"goto({_quote(value)})"
        if verb == "scroll":
            return f"scroll(0, {int(value or 300)})"
        if verb in ("send_msg_to_user",):
            return f"{verb}({_quote(value)})"
        if verb in ("go_back", "go_forward", "noop"):
            return f"{verb}()"
        return f"{verb}({_quote(bid)})" if verb and bid else ""
    if domain == "android":
        kind = get("verb")
        if not kind:
            return ""
        action: dict[str, Any] = {"action_type": kind}
        if get("element"):
            action["index"] = int(get("element"))
        value = get("value")
        if kind in ("input_text", "answer"):
            action["text"] = value
        elif kind in ("scroll", "swipe"):
            action["direction"] = value or "down"
        elif kind == "open_app":
            action["app_name"] = value
        elif kind == "status":
            action["goal_status"] = value or "complete"
        return json.dumps(action)
    if domain == "os":
        verb, value = get("verb"), str(fields.get("value", "") or "")
        if verb in OS_SPECIALS:
            return verb
        if verb in ("typewrite", "press"):
            return f"pyautogui.{verb}({_quote(value)})"
        if verb == "hotkey":
            keys = ", ".join(_quote(k.strip()) for k in value.split("+") if k.strip())
            return f"pyautogui.hotkey({keys})"
        if verb == "scroll":
            return f"pyautogui.scroll({int(value or -300)})"
        if verb:
            return f"pyautogui.{verb}({int(get('x') or 0)}, {int(get('y') or 0)})"
        return ""
    if domain == "search" and get("query"):
        return json.dumps({"name": "web_search", "arguments": {"query": get("query")}})
    return ""
