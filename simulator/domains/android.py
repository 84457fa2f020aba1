"""An Android phone: AndroidWorld JSON actions in, the next UI tree out."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from simulator import observations
from simulator.domains._calls import strip_fence
from simulator.domains._prompt import build_prompt
from simulator.domains.base import ANDROID_ELEMENTS, UIAUTOMATOR_XML, Action, Domain
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


class AndroidDomain(Domain):
    """AndroidWorld's JSON action space, with per-type required fields."""

    name = "android"
    title = "Android"
    observation_formats = (UIAUTOMATOR_XML, ANDROID_ELEMENTS)
    renderer = UIAUTOMATOR_XML
    action_fence = "json"

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

    def detect_format(self, observation: str) -> str | None:
        return observations.detect_format(observation, self.observation_formats)

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
        return [str(action.args["index"])] if "index" in action.args else []
