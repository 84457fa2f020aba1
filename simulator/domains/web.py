"""Web browsing: BrowserGym actions in, the next page (HTML, AXTree or ARIA snapshot) out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from simulator import observations
from simulator.domains._calls import Call, Param, bind, parse_one_call
from simulator.domains._prompt import build_prompt
from simulator.domains._readers import (
    ToolCall,
    first_step_args,
    format_call,
    name_arguments,
    read_python_sequence,
    read_tool_calls,
    sequence,
)
from simulator.domains.base import ARIA_YAML, AXTREE, HTML, Action, Domain, ReadAction
from simulator.domains.forms import Composer, ComposerField, element_choices, whole_number
from simulator.errors import InvalidAction

if TYPE_CHECKING:
    from simulator.world import World

_ROLE = """\
You are the world model of a web browser and of the web sites it visits. An agent \
acts on the current page with BrowserGym actions (click, fill, goto, scroll, ...); \
you play the browser and the sites' servers, and return the page as it looks after \
the action."""

_RULES = (
    "Element ids (bid / ref) are stable: an element that is still on the page keeps its "
    "id; new elements get new ids that were never used on this page.",
    "Forms keep what was typed into them; navigation changes the URL and the page; "
    "go_back returns the previous page as it was.",
    "Server-side state (carts, accounts, posts) persists between pages.",
    "An action on an id that is not on the page changes nothing.",
)

_FORMATS = {
    HTML: """\
The full HTML document of the page after the action, from <!DOCTYPE html> to \
</html>, every element closed, each interactive element carrying a `bid` attribute. \
No Markdown fences, no commentary.""",
    AXTREE: """\
The page's accessibility tree in BrowserGym's text form: one node per line, \
indented with one tab per level, `[bid] role 'name'` followed by properties \
(`, url='...'`, `, focused`); text nodes have no bid (`StaticText 'Hello'`). The \
first line is the `RootWebArea 'title', url='...'` node. No Markdown fences.""",
    ARIA_YAML: """\
The page's Playwright ARIA snapshot in YAML: one `- role "name" [ref=eN]` item per \
line, children indented by two more spaces under an item ending in `:`, text as \
`- text: ...`, link targets as `- /url: ...`. No Markdown fences.""",
}

_BID = Param("bid", (str, int))
_ACTIONS: dict[str, tuple[Param, ...]] = {
    "click": (_BID, Param("button", (str,), False, "left"), Param("modifiers", (list,), False, [])),
    "dblclick": (
        _BID,
        Param("button", (str,), False, "left"),
        Param("modifiers", (list,), False, []),
    ),
    "hover": (_BID,),
    "fill": (_BID, Param("value", (str,))),
    "select_option": (_BID, Param("options", (str, list))),
    "press": (_BID, Param("key_comb", (str,))),
    "focus": (_BID,),
    "clear": (_BID,),
    "scroll": (Param("delta_x", (int, float)), Param("delta_y", (int, float))),
    "goto": (Param("url", (str,)),),
    "go_back": (),
    "go_forward": (),
    "new_tab": (),
    "tab_close": (),
    "tab_focus": (Param("index", (int,)),),
    "send_msg_to_user": (Param("text", (str,)),),
    "report_infeasible": (Param("reason", (str,)),),
    "noop": (Param("wait_ms", (int, float), False, 1000),),
}
_BUTTONS = ("left", "middle", "right")
# Argument names of BrowserGym's whole action set (the strict set above is what the
# studio offers; recorded traces also use the coordinate and file actions).
_BROWSERGYM = {name: tuple(param.name for param in params) for name, params in _ACTIONS.items()} | {
    "drag_and_drop": ("from_bid", "to_bid"),
    "upload_file": ("bid", "file"),
    "mouse_move": ("x", "y"),
    "mouse_click": ("x", "y", "button"),
    "mouse_dblclick": ("x", "y", "button"),
    "mouse_down": ("x", "y", "button"),
    "mouse_up": ("x", "y", "button"),
    "mouse_drag_and_drop": ("from_x", "from_y", "to_x", "to_y"),
    "mouse_upload_file": ("x", "y", "file"),
    "keyboard_down": ("key",),
    "keyboard_up": ("key",),
    "keyboard_press": ("key",),
    "keyboard_type": ("text",),
    "keyboard_insert_text": ("text",),
}
#: Playwright-MCP's tools all start so and take named arguments only.
_PLAYWRIGHT_MCP = "browser_"


def _check(func: str, args: Mapping[str, Any]) -> None:
    """What binding does not check of a studio action's arguments; raises InvalidAction."""
    if "bid" in args and not args["bid"].strip():
        raise InvalidAction(f"{func}(): bid is empty")
    if args.get("button", "left") not in _BUTTONS:
        raise InvalidAction(f"{func}(): button must be one of {', '.join(_BUTTONS)}")
    options = args.get("options")
    if isinstance(options, list) and not all(isinstance(o, str) for o in options):
        raise InvalidAction("select_option(): options must be text or a list of text")


def _read_call(raw: str, call: Call) -> ReadAction:
    """One recorded call: BrowserGym arguments named, Playwright-MCP's kept, others noted."""
    display = format_call(call.func, call.args, call.kwargs)
    notes: list[str] = []
    if call.func in _ACTIONS:
        try:
            args = bind(call, _ACTIONS[call.func])
        except ValueError as error:
            notes.append(str(error))
            args, _ = name_arguments(call, _BROWSERGYM[call.func])
    elif call.func in _BROWSERGYM:
        args, notes = name_arguments(call, _BROWSERGYM[call.func])
    else:
        args = dict(call.kwargs)
        if call.args:
            args["args"] = list(call.args)
        if not call.func.startswith(_PLAYWRIGHT_MCP):
            notes.append(
                f"{call.func}() is not a BrowserGym or Playwright-MCP action; read without checking"
            )
        elif call.args:
            notes.append(f"{call.func}() takes named arguments; the positional ones kept as 'args'")
    if "bid" in args:
        args["bid"] = str(args["bid"])
    if call.func in _ACTIONS:
        try:
            _check(call.func, args)
        except InvalidAction as error:
            notes.append(str(error))
    return ReadAction(
        raw=raw,
        action=Action(raw=raw, kind=call.func, args=args),
        display=display,
        notes=tuple(notes),
    )


#: The composer's verbs: element actions first, then those of the whole page.
_COMPOSER_VERBS = (
    "click",
    "fill",
    "hover",
    "press",
    "select_option",
    "focus",
    "clear",
    "dblclick",
    "goto",
    "go_back",
    "go_forward",
    "scroll",
    "noop",
    "send_msg_to_user",
)
_STARTER = (
    "<!DOCTYPE html>\n<html>\n<head><title>New page</title></head>\n<body>\n"
    '  <h1>Welcome</h1>\n  <p>Describe the first page here.</p>\n  <button bid="1">Continue</button>\n'
    "</body>\n</html>\n"
)


def _compose(verb: str, bid: str, value: str) -> str:
    """A BrowserGym call from the composer's verb, element and value."""
    if verb in ("fill", "press", "select_option"):
        return f"{verb}({bid!r}, {value!r})"
    if verb == "goto":
        return f"goto({value!r})"
    if verb == "scroll":
        return f"scroll(0, {whole_number(value, name='scroll', default=300)})"
    if verb == "send_msg_to_user":
        return f"{verb}({value!r})"
    if verb in ("go_back", "go_forward", "noop"):
        return f"{verb}()"
    return f"{verb}({bid!r})" if verb and bid else ""


def _as_call(tool_call: ToolCall) -> Call:
    """A JSON tool call as the Python call it stands for."""
    if isinstance(tool_call.arguments, Mapping):
        return Call(func=tool_call.name, kwargs=tool_call.arguments)
    return Call(func=tool_call.name, args=(tool_call.arguments,))


class WebDomain(Domain):
    """BrowserGym's high-level action set, parsed with ``ast`` (never evaluated)."""

    name = "web"
    title = "Web browsing"
    observation_formats = (HTML, AXTREE, ARIA_YAML)
    renderer = HTML
    gui = True
    action_fence = "python"
    example_action = "click('12')"
    initial_label = "Initial page"
    initial_help = "HTML (or an AXTree / ARIA snapshot) of the first page."
    starter_observation = _STARTER

    def observation_format_of(self, world: World) -> str:
        """The format this world's pages are written in: that of its initial page, else HTML."""
        detected = self.detect_format(world.initial_observation)
        return detected or HTML

    def system_prompt(self, world: World) -> str:
        return build_prompt(
            world,
            role=_ROLE,
            rules=_RULES,
            observation_format=_FORMATS[self.observation_format_of(world)],
        )

    def parse_action(self, raw: str, world: World) -> Action:
        try:
            call = parse_one_call(raw)
            if call.func not in _ACTIONS:
                raise ValueError(f"unknown action {call.func}()")
            args: dict[str, Any] = bind(call, _ACTIONS[call.func])
        except ValueError as error:
            raise InvalidAction(
                f"{error}; web actions are BrowserGym calls such as click('12'), "
                f"fill('12', 'text'), goto('https://...'): {', '.join(_ACTIONS)}"
            ) from None
        if "bid" in args:
            args["bid"] = str(args["bid"])
        _check(call.func, args)
        return Action(raw=raw, kind=call.func, args=args)

    def read_leniently(self, raw: str) -> ReadAction:
        """BrowserGym calls (one or several), and Playwright-MCP calls as Python or JSON."""
        tool_calls = read_tool_calls(raw)
        if tool_calls is not None:
            readings = [_read_call(raw, _as_call(call)) for call in tool_calls]
            notes = tuple(note for call in tool_calls for note in call.notes)
            reading = sequence(raw, readings)
            return replace(reading, notes=(*notes, *reading.notes))
        return read_python_sequence(raw, lambda call: _read_call(raw, call), "a browser action")

    def composer(self, world: World, observation: str) -> Composer:
        """A verb, an element of the current page and a value."""
        return Composer(
            fields=(
                ComposerField("verb", "Action", "choice", choices=_COMPOSER_VERBS),
                ComposerField(
                    "element",
                    "Element",
                    "choice",
                    choices=element_choices(self.ids_in(observation)),
                    placeholder="element bid…",
                    elements=True,
                ),
                ComposerField("value", "Value", hint="text, URL, key"),
            ),
            action_placeholder=self.example_action,
        )

    def compose(self, world: World, fields: Mapping[str, str]) -> str:
        return _compose(
            fields.get("verb", "").strip(),
            fields.get("element", "").strip(),
            fields.get("value", ""),
        )

    def ids_in(self, observation: str) -> set[str]:
        """The element ids an action may refer to on this page (bids or ARIA refs)."""
        found = self.detect_format(observation)
        if found == AXTREE:
            return {node.bid for node in observations.axtree_lines(observation) if node.bid}
        if found == ARIA_YAML:
            return observations.aria_refs(observation)
        if found == HTML:
            return observations.html_bids(observation)
        return set()

    def referenced_ids(self, action: Action) -> list[str]:
        """The element ids ``action`` acts on: a BrowserGym bid or a Playwright-MCP ref."""
        args = first_step_args(action)
        return [str(args[key]) for key in ("bid", "ref") if key in args]
