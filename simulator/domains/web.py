"""Web browsing: BrowserGym actions in, the next page (HTML, AXTree or ARIA snapshot) out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simulator import observations
from simulator.domains._calls import Param, bind, parse_one_call
from simulator.domains._prompt import build_prompt
from simulator.domains.base import ARIA_YAML, AXTREE, HTML, Action, Domain
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


class WebDomain(Domain):
    """BrowserGym's high-level action set, parsed with ``ast`` (never evaluated)."""

    name = "web"
    title = "Web browsing"
    observation_formats = (HTML, AXTREE, ARIA_YAML)
    renderer = HTML
    action_fence = "python"

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
            if not args["bid"].strip():
                raise InvalidAction(f"{call.func}(): bid is empty")
        if args.get("button", "left") not in _BUTTONS:
            raise InvalidAction(f"{call.func}(): button must be one of {', '.join(_BUTTONS)}")
        options = args.get("options")
        if isinstance(options, list) and not all(isinstance(o, str) for o in options):
            raise InvalidAction("select_option(): options must be text or a list of text")
        return Action(raw=raw, kind=call.func, args=args)

    def detect_format(self, observation: str) -> str | None:
        return observations.detect_format(observation, self.observation_formats)

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
        """The element ids ``action`` acts on."""
        return [str(action.args["bid"])] if "bid" in action.args else []
