"""Web search: ``web_search`` returns result lists, ``web_extractor`` returns page content."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from simulator.domains._calls import Call, Param, bind, parse_json_call, parse_one_call
from simulator.domains._prompt import build_prompt, dump_json
from simulator.domains._readers import (
    format_call,
    name_arguments,
    read_python_sequence,
    read_tool_calls,
    sequence,
)
from simulator.domains.base import JSON, TEXT, Action, Domain, ReadAction
from simulator.domains.forms import Composer, ComposerField, EditorField
from simulator.errors import InvalidAction

if TYPE_CHECKING:
    from simulator.world import World

_ROLE = """\
You are the world model of a web search engine and of the web pages it indexes. An \
agent calls two tools: `web_search` (queries in, ranked results out) and \
`web_extractor` (a URL and a goal in, the page's relevant content out)."""

_RULES = (
    "The corpus below is the ground truth of this world. Results and page contents must "
    "agree with its entities and facts; never contradict a fact, and do not invent facts "
    "about its entities that it does not imply.",
    "Queries unrelated to the corpus still return plausible, ordinary results.",
    "URLs must be stable: the same page keeps the same URL and content across calls.",
)

_FORMAT = """\
For `web_search`: for each query, a header line `## Results for "<query>"`, then up to \
10 numbered results, each `N. [Title](URL)` followed by a one- or two-sentence snippet.
For `web_extractor`: the page's title and URL on the first line, then the content \
relevant to the goal as plain text or Markdown. An unreachable page returns a \
one-line error."""

_PARAMS = {
    "web_search": (Param("query", (str, list)),),
    "web_extractor": (Param("url", (str, list)), Param("goal", (str,), required=False, default="")),
}


def _text_or_texts(name: str, value: Any) -> None:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise InvalidAction(f"{name} must be non-empty text or a non-empty list of text")


# The names real search agents use (Qwen DeepResearch's search/visit) for the two tools.
_TOOL_ALIASES = {
    "web_search": "web_search",
    "search": "web_search",
    "web_extractor": "web_extractor",
    "visit": "web_extractor",
}
_ARGUMENT_ALIASES = {"queries": "query", "urls": "url"}


def _check(name: str, arguments: Mapping[str, Any]) -> None:
    """What a known tool's arguments must hold; raises InvalidAction (both parsers use it)."""
    key = "query" if name == "web_search" else "url"
    if key not in arguments:
        raise InvalidAction(f"{name} needs {key!r}")
    _text_or_texts(f"{name} {key}", arguments[key])
    if not isinstance(arguments.get("goal", ""), str):
        raise InvalidAction("web_extractor goal must be text")


def _read_call(
    raw: str, name: str, arguments: Any, display: str, notes: Sequence[str]
) -> ReadAction:
    """One recorded call: known tools under their studio names, any other kept with a note."""
    kind = _TOOL_ALIASES.get(name)
    if kind is None:
        action = Action(raw=raw, kind="tool_call", args={"name": name, "arguments": arguments})
        note = f"{name!r} is not a search tool (web_search, web_extractor); read without checking"
        return ReadAction(raw=raw, action=action, display=display, notes=(*notes, note))
    if isinstance(arguments, str):  # a bare query or URL
        arguments = {"query" if kind == "web_search" else "url": arguments}
    if not isinstance(arguments, Mapping):
        arguments = {}
    args = {_ARGUMENT_ALIASES.get(key, key): value for key, value in arguments.items()}
    try:
        _check(kind, args)
    except InvalidAction as error:
        notes = (*notes, str(error))
    action = Action(raw=raw, kind=kind, args=args)
    return ReadAction(raw=raw, action=action, display=display, notes=tuple(notes))


def _read_python(raw: str, call: Call) -> ReadAction:
    kind = _TOOL_ALIASES.get(call.func)
    arguments, notes = name_arguments(call, [param.name for param in _PARAMS[kind]] if kind else [])
    display = format_call(call.func, call.args, call.kwargs)
    return _read_call(raw, call.func, arguments, display, notes)


class SearchDomain(Domain):
    """Search calls, as JSON tool calls or as ``web_search("...")`` function calls."""

    name = "search"
    title = "Web search"
    observation_formats = (TEXT, JSON)
    renderer = TEXT
    action_fence = "json"
    example_action = '{"name": "web_search", "arguments": {"query": "example query"}}'
    initial_help = "Optional: what the agent sees before its first search."
    editor_fields = (
        EditorField(
            "corpus",
            "Corpus: entities and facts",
            "json",
            'JSON list: [{"entity": "...", "facts": ["...", ...]}, ...]',
        ),
    )

    def system_prompt(self, world: World) -> str:
        corpus = world.extras.get("corpus")
        return build_prompt(
            world,
            role=_ROLE,
            sections=[("Corpus: entities and facts", dump_json(corpus) if corpus else "")],
            rules=_RULES,
            observation_format=_FORMAT,
        )

    def parse_action(self, raw: str, world: World) -> Action:
        try:
            call = parse_json_call(raw)
            if call is None:
                parsed = parse_one_call(raw)
                name = parsed.func
                if name not in _PARAMS:
                    raise ValueError(f"unknown tool {name!r}")
                arguments = bind(parsed, _PARAMS[name])
            else:
                name, arguments = call
                if name not in _PARAMS:
                    raise ValueError(f"unknown tool {name!r}")
        except ValueError as error:
            raise InvalidAction(
                f"{error}; a search action is web_search(query) or web_extractor(url, goal), "
                'as a call or as JSON {"name": "web_search", "arguments": {"query": "..."}}'
            ) from None
        _check(name, arguments)
        return Action(raw=raw, kind=name, args=dict(arguments))

    def read_leniently(self, raw: str) -> ReadAction:
        """JSON calls (``queries`` lists, JSON-text or bare-text arguments), else Python calls."""
        tool_calls = read_tool_calls(raw)
        if tool_calls is not None:
            return sequence(
                raw,
                [
                    _read_call(raw, call.name, call.arguments, call.display(), call.notes)
                    for call in tool_calls
                ],
            )
        return read_python_sequence(raw, lambda call: _read_python(raw, call), "a search call")

    def composer(self, world: World, observation: str) -> Composer:
        return Composer(
            fields=(ComposerField("query", "Search query"),),
            action_placeholder=self.example_action,
        )

    def compose(self, world: World, fields: Mapping[str, str]) -> str:
        """A ``web_search`` call for the query ("" without one)."""
        query = fields.get("query", "").strip()
        if not query:
            return ""
        return json.dumps({"name": "web_search", "arguments": {"query": query}})

    def validate_extras(self, extras: Mapping[str, Any]) -> list[str]:
        corpus = extras.get("corpus", [])
        if not isinstance(corpus, list | Mapping):
            return ["corpus: must be a list of entities or an object"]
        return []
