"""An Android phone: AndroidWorld JSON actions in, the next UI tree out."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from simulator import observations
from simulator.domains._calls import strip_fence
from simulator.domains._prompt import build_prompt
from simulator.domains._readers import (
    first_step_args,
    format_call,
    load_json,
    loose_text,
    sequence,
)
from simulator.domains.base import (
    ANDROID_ELEMENTS,
    UIAUTOMATOR_XML,
    Action,
    Domain,
    ReadAction,
    unread,
)
from simulator.domains.forms import Composer, ComposerField, element_choices, whole_number
from simulator.errors import InvalidAction

if TYPE_CHECKING:
    from simulator.world import World

_ROLE = """\
You are the world model of an Android phone. An agent acts on the screen with \
AndroidWorld actions (tap an element, type, swipe, go back, open an app); you play \
Android and its apps, and return the screen's UI tree after the action."""

_RULES = (
    "Elements are addressed by their position in the UI tree (index) or by screen "
    "coordinates; a tap acts on the element whose bounds contain the point.",
    "App data (messages, contacts, settings, files) persists between actions and apps.",
    "Keep resource ids, classes and package names realistic for the app on screen.",
)

_FORMATS = {
    UIAUTOMATOR_XML: """\
The screen as `uiautomator dump` XML: `<?xml version='1.0' encoding='UTF-8' \
standalone='yes' ?>` then `<hierarchy rotation="0">` with nested `<node>` elements \
carrying index, text, resource-id, class, package, content-desc, the boolean state \
attributes and bounds="[x1,y1][x2,y2]". Every element closed. No Markdown fences.""",
    ANDROID_ELEMENTS: """\
The screen as AndroidWorld's element list: one line per element, \
`UI element N: {"index": N, "text": ..., "content_description": ..., "class_name": \
..., "bbox_pixels": {"x_min": ..., "x_max": ..., "y_min": ..., "y_max": ...}, \
"is_clickable": ..., "is_editable": ...}`, numbered from 0. No Markdown fences.""",
}

_DIRECTIONS = ("up", "down", "left", "right")
_TARGETED = ("click", "double_tap", "long_press")
_NO_FIELDS = ("navigate_back", "navigate_home", "wait", "keyboard_enter")
_ACTION_TYPES = (
    *_TARGETED,
    "input_text",
    "swipe",
    "scroll",
    *_NO_FIELDS,
    "open_app",
    "status",
    "answer",
)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _target(kind: str, fields: dict[str, Any], *, required: bool) -> None:
    """An element index, or x and y coordinates."""
    if "index" in fields:
        if not _is_int(fields["index"]) or fields["index"] < 0:
            raise InvalidAction(f"{kind}: index must be an integer >= 0")
    elif "x" in fields or "y" in fields:
        if not (_is_int(fields.get("x")) and _is_int(fields.get("y"))):
            raise InvalidAction(f"{kind}: x and y must both be integers")
    elif required:
        raise InvalidAction(f'{kind} needs "index" (element number) or "x" and "y"')


def _check(kind: str, fields: dict[str, Any]) -> None:
    if kind in _TARGETED:
        _target(kind, fields, required=True)
    elif kind == "input_text":
        if not isinstance(fields.get("text"), str):
            raise InvalidAction('input_text needs "text"')
        _target(kind, fields, required=False)
    elif kind in ("swipe", "scroll"):
        if fields.get("direction") not in _DIRECTIONS:
            raise InvalidAction(f'{kind} needs "direction": one of {", ".join(_DIRECTIONS)}')
        _target(kind, fields, required=False)
    elif kind == "open_app":
        if not isinstance(fields.get("app_name"), str) or not fields["app_name"].strip():
            raise InvalidAction('open_app needs "app_name"')
    elif kind == "status":
        if fields.get("goal_status") not in ("complete", "infeasible"):
            raise InvalidAction('status needs "goal_status": "complete" or "infeasible"')
    elif kind == "answer" and not isinstance(fields.get("text"), str):
        raise InvalidAction('answer needs "text"')


# What other phone agents call AndroidWorld's action types (DroidBot, tool-use models).
_KIND_ALIASES = {
    "tap": "click",
    "touch": "click",
    "double_click": "double_tap",
    "long_touch": "long_press",
    "type": "input_text",
    "set_text": "input_text",
    "back": "navigate_back",
    "key_back": "navigate_back",
    "home": "navigate_home",
    "enter": "keyboard_enter",
    "open": "open_app",
    "launch": "open_app",
}
_KEY_KINDS = {"BACK": "navigate_back", "HOME": "navigate_home", "ENTER": "keyboard_enter"}
#: Target fields come first, as people read a call: click(index=3), input_text(index=3, text=...).
_TARGET_FIELDS = ("index", "x", "y")
_INVOKE = re.compile(r'<invoke\s+name="(?P<name>[^"]*)"\s*>(?P<body>.*?)</invoke>', re.DOTALL)
_PARAMETER = re.compile(
    r'<parameter\s+name="(?P<name>[^"]*)"\s*>(?P<value>.*?)</parameter>', re.DOTALL
)
_DROIDBOT = re.compile(r"(?P<verb>[A-Za-z_]+)\b\s*(?P<rest>.*)", re.DOTALL)
_DROIDBOT_VERBS = {
    "touch": "click",
    "long_touch": "long_press",
    "set_text": "input_text",
    "scroll": "scroll",
    "key_back": "navigate_back",
    "press": "press_key",
}
_ELEMENT = re.compile(r"<(?P<tag>[A-Za-z][\w-]*)(?P<attrs>[^>]*)>")
_ATTRIBUTE = re.compile(r"""([\w-]+)=("[^"]*"|'[^']*'|[^\s>]+)""")


def _number(value: Any) -> Any:
    """A decimal text as an int (recorded XML and DroidBot text carry numbers as text)."""
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value)
    return value


def _read_fields(raw: str, kind: Any, fields: Mapping[str, Any]) -> ReadAction:
    """AndroidWorld's ``(action_type, fields)`` normalised and checked; problems become notes."""
    kind = _KIND_ALIASES.get(str(kind), str(kind))
    fields = {
        key: _number(value) if key in _TARGET_FIELDS else value for key, value in fields.items()
    }
    ordered = {key: fields[key] for key in _TARGET_FIELDS if key in fields} | fields
    notes = []
    if kind not in _ACTION_TYPES:
        notes.append(f"unknown action type {kind!r}; read without checking")
    else:
        try:
            _check(kind, ordered)
        except InvalidAction as error:
            notes.append(str(error))
    action = Action(raw=raw, kind=kind, args=ordered)
    return ReadAction(
        raw=raw, action=action, display=format_call(kind, kwargs=ordered), notes=tuple(notes)
    )


def _read_json(raw: str, data: Any) -> ReadAction:
    """AndroidWorld JSON, ``{"action_type": "click", "index": 46}`` (``action`` as an alias)."""
    if not isinstance(data, dict):
        return unread(raw, "JSON that is not an object; an android action is an object")
    key = "action_type" if "action_type" in data else "action"
    if key not in data:
        return unread(
            raw, 'a JSON android action needs "action_type", e.g. {"action_type": "click"}'
        )
    fields = {name: value for name, value in data.items() if name != key}
    return _read_fields(raw, data[key], fields)


def _parameter(value: str) -> Any:
    """A parameter's text; JSON arrays and objects (coordinates) decoded."""
    decoded = load_json(value) if value.strip()[:1] in ("[", "{") else None
    return value if decoded is None else decoded


def _read_invokes(raw: str, text: str) -> ReadAction:
    """Anthropic-style ``<invoke name="phone"><parameter name="action">click</parameter>...``.

    Read with a regular expression, not an XML parser: model output is untrusted
    and often not well-formed XML (unescaped ``&`` in typed text).
    """
    readings = []
    for invoke in _INVOKE.finditer(text):
        params = {m["name"]: _parameter(m["value"]) for m in _PARAMETER.finditer(invoke["body"])}
        kind = params.pop("action", invoke["name"])
        readings.append(_read_fields(raw, kind, params))
    if not readings:
        return unread(raw, "an <invoke> without a closing </invoke>; nothing read")
    return sequence(raw, readings)


def _element(markup: str) -> tuple[dict[str, Any], str]:
    """A DroidBot view ``<button id=3 bound_box=0,100,200,300>OK</button>``: its target and
    the text after its opening tag (after the closing tag when there is one)."""
    match = _ELEMENT.search(markup)
    if match is None:
        return {}, markup.strip()
    attributes = {name: value.strip("\"'") for name, value in _ATTRIBUTE.findall(match["attrs"])}
    target: dict[str, Any] = {}
    if "id" in attributes:
        target["index"] = _number(attributes["id"])
    elif "bound_box" in attributes:
        corners = [_number(part) for part in attributes["bound_box"].split(",")]
        if len(corners) == 4 and all(isinstance(c, int) for c in corners):
            target |= {"x": (corners[0] + corners[2]) // 2, "y": (corners[1] + corners[3]) // 2}
    after = markup[match.end() :]
    inner, closed, rest = after.partition(f"</{match['tag']}>")
    return target, (rest.strip() or inner.strip()) if closed else after.strip()


_STARTER = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n"
    '<hierarchy rotation="0">\n'
    '  <node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
    'package="com.example.home" content-desc="" clickable="false" bounds="[0,0][1080,2400]">\n'
    '    <node index="0" text="Home" resource-id="com.example.home:id/title" '
    'class="android.widget.TextView" package="com.example.home" content-desc="" '
    'clickable="false" bounds="[40,120][1040,220]" />\n'
    "  </node>\n</hierarchy>\n"
)
#: Which field of an action the composer's free "value" fills, per action type.
_VALUE_FIELDS = {
    "input_text": "text",
    "answer": "text",
    "scroll": "direction",
    "swipe": "direction",
    "open_app": "app_name",
    "status": "goal_status",
}
_VALUE_DEFAULTS = {"scroll": "down", "swipe": "down", "status": "complete"}


def _compose(kind: str, element: str, value: str) -> str:
    """AndroidWorld JSON from the composer's action type, element index and value."""
    if not kind:
        return ""
    action: dict[str, Any] = {"action_type": kind}
    if element:
        action["index"] = whole_number(element, name="index", default=0)
    if kind in _VALUE_FIELDS:
        action[_VALUE_FIELDS[kind]] = value or _VALUE_DEFAULTS.get(kind, "")
    return json.dumps(action)


def _read_droidbot(raw: str, text: str) -> ReadAction | None:
    """A DroidBot command (``touch <button id=3 ...>OK</button>``, ``scroll up <...>``,
    ``set_text <input ...>hello``, ``key_back``, ``press BACK``); None for other text."""
    match = _DROIDBOT.fullmatch(text)
    if match is None or match["verb"].lower() not in _DROIDBOT_VERBS:
        return None
    kind = _DROIDBOT_VERBS[match["verb"].lower()]
    word, rest = "", match["rest"]
    if kind in ("scroll", "press_key"):  # `scroll up <...>`, `press BACK`
        word, rest = (rest.split(maxsplit=1) + ["", ""])[:2]
    target, typed = _element(rest)
    if kind == "press_key":
        kind = _KEY_KINDS.get(word.upper(), kind)
        fields: dict[str, Any] = {} if kind in _KEY_KINDS.values() else {"key": word}
    elif kind == "scroll":
        fields = {**target, "direction": word.lower()}
    elif kind == "input_text":
        fields = {**target, "text": typed}
    else:
        fields = target
    return _read_fields(raw, kind, fields)


class AndroidDomain(Domain):
    """AndroidWorld's JSON action space, with per-type required fields."""

    name = "android"
    title = "Android"
    observation_formats = (UIAUTOMATOR_XML, ANDROID_ELEMENTS)
    renderer = UIAUTOMATOR_XML
    gui = True
    action_fence = "json"
    example_action = '{"action_type": "click", "index": 3}'
    initial_label = "Initial screen"
    initial_help = "uiautomator XML (or an AndroidWorld element list)."
    starter_observation = _STARTER

    def system_prompt(self, world: World) -> str:
        written_as = self.detect_format(world.initial_observation) or UIAUTOMATOR_XML
        return build_prompt(
            world, role=_ROLE, rules=_RULES, observation_format=_FORMATS[written_as]
        )

    def parse_action(self, raw: str, world: World) -> Action:
        try:
            data = json.loads(strip_fence(raw))
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise InvalidAction(
                'an android action is a JSON object such as {"action_type": "click", "index": 3}'
            )
        kind = data.get("action_type")
        if kind not in _ACTION_TYPES:
            raise InvalidAction(
                f"unknown action_type {kind!r}; use one of {', '.join(_ACTION_TYPES)}"
            )
        fields = {key: value for key, value in data.items() if key != "action_type"}
        _check(kind, fields)
        return Action(raw=raw, kind=kind, args=fields)

    def read_leniently(self, raw: str) -> ReadAction:
        """AndroidWorld JSON, ``<invoke>`` tool calls (``<function_calls>`` wrapped or not),
        or DroidBot's text commands."""
        text = loose_text(raw)
        if text.startswith("{"):
            return _read_json(raw, load_json(text))
        if "<invoke" in text:
            return _read_invokes(raw, text)
        return _read_droidbot(raw, text) or unread(
            raw,
            "not an android action: expected AndroidWorld JSON, an <invoke> call or a "
            "DroidBot command such as `touch <button id=3>OK</button>`",
        )

    def composer(self, world: World, observation: str) -> Composer:
        """An action type, an element of the current screen and a value."""
        return Composer(
            fields=(
                ComposerField("verb", "Action", "choice", choices=_ACTION_TYPES),
                ComposerField(
                    "element",
                    "Element",
                    "choice",
                    choices=element_choices(self.ids_in(observation)),
                    placeholder="element index…",
                    elements=True,
                ),
                ComposerField("value", "Value", hint="text, direction, app name"),
            ),
            action_placeholder=self.example_action,
        )

    def compose(self, world: World, fields: Mapping[str, str]) -> str:
        return _compose(
            fields.get("verb", "").strip(),
            fields.get("element", "").strip(),
            fields.get("value", "").strip(),
        )

    def ids_in(self, observation: str) -> set[str]:
        """Element indices on this screen: node positions in a dump, or the list's numbers."""
        found = self.detect_format(observation)
        if found == ANDROID_ELEMENTS:
            return {str(i) for i in observations.android_element_indices(observation)}
        if found == UIAUTOMATOR_XML:
            try:
                return {str(i) for i in range(len(observations.parse_uiautomator(observation)))}
            except ValueError:
                return set()
        return set()

    def referenced_ids(self, action: Action) -> list[str]:
        """The element index ``action`` acts on, if it names one."""
        args = first_step_args(action)
        return [str(args["index"])] if "index" in args else []
