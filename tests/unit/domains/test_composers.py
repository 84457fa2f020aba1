"""Each domain's composer: the form it offers, and the action its fields make.

Whatever the composer makes must be an action the same domain accepts; the studio
shows the form and posts it back without knowing which domain it is.
"""

from __future__ import annotations

import json

import pytest

from simulator.domains import domain_names, get_domain
from simulator.errors import InvalidAction
from simulator.world import World

TOOLS = [
    {
        "name": "get_order",
        "description": "Look up an order",
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "integer"},
                "status": {"type": "string", "enum": ["open", "closed"]},
                "filters": {"type": ["object", "null"]},
            },
            "required": ["order_id"],
        },
    }
]
PAGE = "<html><body><button bid='10'>Next</button><a bid='2'>Home</a><input bid='3'></body></html>"


def _world(domain: str) -> World:
    extras = {"tools": TOOLS} if domain == "mcp" else {}
    return World(domain=domain, title="A world", extras=extras)


@pytest.mark.parametrize(
    ("domain", "fields", "action"),
    [
        (
            "mcp",
            {"tool": "get_order", "arg__get_order__order_id": "7", "arg__get_order__filters": "{}"},
            '{"name": "get_order", "arguments": {"order_id": 7, "filters": {}}}',
        ),
        (
            "search",
            {"query": "capital"},
            '{"name": "web_search", "arguments": {"query": "capital"}}',
        ),
        ("web", {"verb": "fill", "element": "3", "value": "42"}, "fill('3', '42')"),
        ("web", {"verb": "scroll", "value": ""}, "scroll(0, 300)"),
        ("web", {"verb": "go_back"}, "go_back()"),
        (
            "android",
            {"verb": "input_text", "element": "4", "value": "hi"},
            '{"action_type": "input_text", "index": 4, "text": "hi"}',
        ),
        ("android", {"verb": "scroll"}, '{"action_type": "scroll", "direction": "down"}'),
        ("os", {"verb": "hotkey", "value": "ctrl+s"}, "pyautogui.hotkey('ctrl', 's')"),
        ("os", {"verb": "click", "x": "10", "y": "20"}, "pyautogui.click(10, 20)"),
        ("os", {"verb": "DONE"}, "DONE"),
    ],
)
def test_the_fields_make_an_action_the_domain_accepts(domain, fields, action):
    world = _world(domain)
    spec = get_domain(domain)

    composed = spec.compose(world, fields)

    assert composed == action
    assert spec.parse_action(composed, world).raw == action


@pytest.mark.parametrize(
    ("domain", "fields", "message"),
    [
        ("mcp", {"tool": "get_order", "arg__get_order__order_id": "seven"}, "order_id"),
        ("web", {"verb": "scroll", "value": "far"}, "scroll must be a whole number"),
        ("android", {"verb": "click", "element": "first"}, "index must be a whole number"),
        ("os", {"verb": "click", "x": "left"}, "x must be a whole number"),
    ],
)
def test_an_unusable_field_is_refused_with_its_name(domain, fields, message):
    with pytest.raises(InvalidAction, match=message):
        get_domain(domain).compose(_world(domain), fields)


@pytest.mark.parametrize("domain", ["mcp", "search", "terminal", "swe", "web", "os", "android"])
def test_empty_fields_make_no_action(domain):
    assert get_domain(domain).compose(_world(domain), {}) == ""


def test_the_element_field_lists_the_screen_in_counting_order():
    composer = get_domain("web").composer(_world("web"), PAGE)

    assert composer.element_field is not None
    assert composer.element_field.choices == ("2", "3", "10")


def test_mcp_offers_one_group_of_typed_fields_per_tool():
    composer = get_domain("mcp").composer(_world("mcp"), "")

    (chooser,) = composer.fields
    (group,) = composer.groups
    assert chooser.choices == ("get_order",) and composer.element_field is None
    assert [(f.name, f.kind, f.required) for f in group.fields] == [
        ("arg__get_order__order_id", "text", True),
        ("arg__get_order__status", "choice", False),
        ("arg__get_order__filters", "json", False),
    ]
    assert group.fields[1].choices == ("open", "closed")


@pytest.mark.parametrize("domain", ["terminal", "swe"])
def test_a_shell_composes_in_its_command_box(domain):
    composer = get_domain(domain).composer(_world(domain), "")

    assert composer.fields == () and composer.action_label == "Command"


@pytest.mark.parametrize("name", domain_names())
def test_every_domain_s_first_action_is_one_it_accepts(name):
    """The composer's placeholder, the LLM agent's example and the prompt preview's action
    (for mcp, a call of the first tool: valid when the tool requires no argument)."""
    world = World(domain=name, title="A world", extras={"tools": [{"name": "ping"}]})
    domain = get_domain(name)
    action = domain.first_action(world)

    assert domain.parse_action(action, world).raw == action
    assert domain.composer(world, "").action_placeholder == domain.example_action


def test_mcp_previews_a_call_of_the_world_s_first_tool():
    action = get_domain("mcp").first_action(_world("mcp"))

    assert json.loads(action) == {"name": "get_order", "arguments": {}}
