"""web (BrowserGym), os (pyautogui) and android (AndroidWorld JSON) actions."""

from __future__ import annotations

import pytest

from simulator.domains import get_domain
from simulator.domains.android import AndroidDomain
from simulator.errors import InvalidAction
from simulator.world import World

WEB = get_domain("web")
OS = get_domain("os")
ANDROID = AndroidDomain()
WORLD = World(domain="web", title="Shop")


@pytest.mark.parametrize(
    ("raw", "kind", "args"),
    [
        ('click("227")', "click", {"bid": "227", "button": "left", "modifiers": []}),
        ("click(227, button='right')", "click", {"bid": "227", "button": "right", "modifiers": []}),
        ("dblclick('s5e44')", "dblclick", {"bid": "s5e44", "button": "left", "modifiers": []}),
        ("hover('12')", "hover", {"bid": "12"}),
        ("fill('272', 'white rice')", "fill", {"bid": "272", "value": "white rice"}),
        (
            "select_option('s5e24', ['Price (low to high)'])",
            "select_option",
            {"bid": "s5e24", "options": ["Price (low to high)"]},
        ),
        ("press('272', 'Enter')", "press", {"bid": "272", "key_comb": "Enter"}),
        ("focus('1')", "focus", {"bid": "1"}),
        ("clear('1')", "clear", {"bid": "1"}),
        ("scroll(0, -200.5)", "scroll", {"delta_x": 0, "delta_y": -200.5}),
        ("goto('http://shop.example/cart')", "goto", {"url": "http://shop.example/cart"}),
        ("go_back()", "go_back", {}),
        ("go_forward()", "go_forward", {}),
        ("new_tab()", "new_tab", {}),
        ("tab_close()", "tab_close", {}),
        ("tab_focus(1)", "tab_focus", {"index": 1}),
        ("send_msg_to_user('Done: 3 items')", "send_msg_to_user", {"text": "Done: 3 items"}),
        ("noop()", "noop", {"wait_ms": 1000}),
        ("```python\nnoop(500)\n```", "noop", {"wait_ms": 500}),
    ],
)
def test_it_parses_the_browsergym_action_set(raw, kind, args):
    action = WEB.parse_action(raw, WORLD)

    assert (action.kind, dict(action.args)) == (kind, args)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("__import__('os').system('rm -rf /')", "call a function by name"),
        ("click(open('x').read())", "must be a literal value"),
        ("x = click('1')", "only function calls are allowed, found `x = click('1')`"),
        ("submit('1')", "unknown action submit()"),
        ("click()", "click(bid, button=..., modifiers=...): missing argument 'bid'"),
        ("fill('1', 'a', 'b')", "takes at most 2 arguments, got 3"),
        ("fill('1', text='a')", "has no argument 'text'"),
        ("fill('1', 'a', value='b')", "argument 'value' given twice"),
        ("scroll('up', 0)", "'delta_x' must be an integer or a number, got 'up'"),
        ("tab_focus(True)", "'index' must be an integer, got True"),
        ("click('')", "click(): bid is empty"),
        ("click('1', button='top')", "button must be one of left, middle, right"),
        ("select_option('1', [1, 2])", "options must be text or a list of text"),
        ("click(*ids)", "*args are not allowed"),
        ("click(**kw)", "**kwargs are not allowed"),
        ("click('1'", "not valid Python call syntax"),
        ("", "no function call found"),
    ],
)
def test_it_rejects_bad_web_actions_without_evaluating_them(raw, message):
    with pytest.raises(InvalidAction) as caught:
        WEB.parse_action(raw, WORLD)

    assert message in str(caught.value)


def test_it_parses_pyautogui_code_and_the_special_words():
    code = "import pyautogui\nimport time\npyautogui.click(960, 540)\ntime.sleep(0.5)\npyautogui.hotkey('ctrl', 's')"

    action = OS.parse_action(code, WORLD)

    assert action.kind == "pyautogui"
    assert [call["func"] for call in action.args["calls"]] == [
        "pyautogui.click",
        "time.sleep",
        "pyautogui.hotkey",
    ]
    assert action.args["calls"][0]["args"] == [960, 540]
    assert OS.parse_action("DONE", WORLD).kind == "done"
    assert OS.parse_action(" FAIL\n", WORLD).kind == "fail"
    assert OS.parse_action("WAIT", WORLD).kind == "wait"
    typed = OS.parse_action("pyautogui.typewrite('Invoice 7', interval=0.05)", WORLD)
    assert typed.args["calls"][0]["kwargs"] == {"interval": 0.05}
    assert OS.parse_action("pyautogui.scroll(-3)", WORLD).kind == "pyautogui"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("import os\nos.system('reboot')", "only function calls are allowed, found `import os`"),
        ("os.system('reboot')", "os.system() is not allowed"),
        ("pyautogui.screenshot()", "pyautogui.screenshot() is not allowed"),
        ("pyautogui.click('here', 2)", "x and y must be numbers"),
        ("pyautogui.scroll()", "the first argument must be a number of clicks"),
        ("pyautogui.write()", "the first argument must be the text to type"),
        ("pyautogui.hotkey('ctrl', 5)", "give the key names as text"),
        ("time.sleep(-1)", "time.sleep() takes one number of seconds >= 0"),
        ("pyautogui.click(x, 2)", "must be a literal value, found `x`"),
        ("done", "found `done`; an os action is pyautogui code or DONE / FAIL / WAIT"),
    ],
)
def test_it_rejects_other_os_code(raw, message):
    with pytest.raises(InvalidAction) as caught:
        OS.parse_action(raw, WORLD)

    assert message in str(caught.value)


def test_it_validates_the_os_screen():
    assert OS.validate_extras({"screen": {"width": 1920, "height": 1080}}) == []
    assert OS.validate_extras({"screen": {"width": "wide"}}) == [
        "screen: must be an object with numeric width and height"
    ]


@pytest.mark.parametrize(
    ("raw", "kind", "args"),
    [
        ('{"action_type": "click", "index": 3}', "click", {"index": 3}),
        ('{"action_type": "click", "x": 670, "y": 1200}', "click", {"x": 670, "y": 1200}),
        ('{"action_type": "long_press", "index": 0}', "long_press", {"index": 0}),
        (
            '{"action_type": "input_text", "text": "hello", "index": 7}',
            "input_text",
            {"text": "hello", "index": 7},
        ),
        ('{"action_type": "swipe", "direction": "up"}', "swipe", {"direction": "up"}),
        (
            '{"action_type": "scroll", "direction": "down", "index": 2}',
            "scroll",
            {"direction": "down", "index": 2},
        ),
        ('{"action_type": "navigate_back"}', "navigate_back", {}),
        ('{"action_type": "navigate_home"}', "navigate_home", {}),
        ('{"action_type": "open_app", "app_name": "YouTube"}', "open_app", {"app_name": "YouTube"}),
        ('{"action_type": "wait"}', "wait", {}),
        (
            '{"action_type": "status", "goal_status": "complete"}',
            "status",
            {"goal_status": "complete"},
        ),
        ('{"action_type": "answer", "text": "42"}', "answer", {"text": "42"}),
    ],
)
def test_it_parses_androidworld_actions(raw, kind, args):
    action = ANDROID.parse_action(raw, WORLD)

    assert (action.kind, dict(action.args)) == (kind, args)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("tap the search icon", "an android action is a JSON object"),
        ('{"action_type": "fly"}', "unknown action_type 'fly'; use one of click"),
        ('{"action_type": "click"}', 'click needs "index" (element number) or "x" and "y"'),
        ('{"action_type": "click", "index": -1}', "index must be an integer >= 0"),
        ('{"action_type": "click", "index": true}', "index must be an integer >= 0"),
        ('{"action_type": "click", "x": 10}', "x and y must both be integers"),
        ('{"action_type": "input_text", "index": 1}', 'input_text needs "text"'),
        ('{"action_type": "scroll", "direction": "sideways"}', 'scroll needs "direction"'),
        ('{"action_type": "open_app", "app_name": " "}', 'open_app needs "app_name"'),
        ('{"action_type": "status", "goal_status": "done"}', 'status needs "goal_status"'),
        ('{"action_type": "answer"}', 'answer needs "text"'),
    ],
)
def test_it_rejects_bad_android_actions(raw, message):
    with pytest.raises(InvalidAction) as caught:
        ANDROID.parse_action(raw, WORLD)

    assert message in str(caught.value)


def test_android_ids_are_node_positions_or_element_numbers():
    assert ANDROID.ids_in("<hierarchy><node/><node><node/></node></hierarchy>") == {"0", "1", "2"}
    assert ANDROID.ids_in("<?xml version='1.0'?><hierarchy><node>") == set()
    assert ANDROID.ids_in("UI element 0: {}\nUI element 1: {}") == {"0", "1"}
    assert ANDROID.referenced_ids(ANDROID.parse_action('{"action_type": "wait"}', WORLD)) == []


def test_the_registry_says_which_domains_show_screens():
    from simulator.domains import domain_names, is_gui

    assert {name for name in domain_names() if is_gui(name)} == {"web", "os", "android"}
    assert not is_gui("no-such-domain")
