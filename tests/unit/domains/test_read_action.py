"""read_action: real agent traces of every style are read, never refused; notes say what is odd."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.domains import Action, ReadAction, domain_names, get_domain
from simulator.domains.android import AndroidDomain
from simulator.domains.base import Domain
from simulator.domains.web import WebDomain
from simulator.errors import InvalidAction
from simulator.world import World
from tests.unit.verifiers._fixtures import FIXTURES, read, tau_bench_messages

TERMINAL = get_domain("terminal")
SWE = get_domain("swe")
MCP = get_domain("mcp")
SEARCH = get_domain("search")
WEB = get_domain("web")
OS = get_domain("os")
ANDROID = get_domain("android")
TRACE_WORLD = World(domain="mcp", title="Imported trace")
CALCULATOR = World(
    domain="mcp",
    title="Calculator",
    extras={
        "tools": [
            {
                "name": "calculate",
                "input_schema": {
                    "type": "object",
                    "properties": {"expression": {"type": "string"}},
                    "required": ["expression"],
                },
            }
        ]
    },
)


def _awb_terminal_actions() -> list[str]:
    """The keystroke arrays of the AgentWorldBench rows, as recorded."""
    lines = (FIXTURES / "agentworldbench" / "synthetic_terminal.jsonl").read_text().splitlines()
    return [
        json.loads(line)["current_prompt"].split("```json\n")[1].split("\n```")[0] for line in lines
    ]


def test_agentworldbench_keystrokes_read_as_keystrokes():
    readings = [TERMINAL.read_action(raw) for raw in _awb_terminal_actions()]

    assert [r.display for r in readings] == [
        "keystrokes('pwd\\n', duration=0.1)",
        "keystrokes('cd tests\\n', duration=0.1)",
        "keystrokes('pwd\\n', duration=0.1)",
    ]
    assert readings[1].action is not None
    assert readings[1].action.args == {
        "keystrokes": [{"keystrokes": "cd tests\n", "duration": 0.1}]
    }
    assert all(r.notes == () for r in readings)


@pytest.mark.parametrize(
    ("raw", "kind", "args", "display"),
    [
        (
            '{"keystrokes": "C-c", "duration": 1}',
            "keystrokes",
            {"keystrokes": [{"keystrokes": "C-c", "duration": 1.0}]},
            "keystrokes('C-c', duration=1.0)",
        ),
        ("ls -la /app", "command", {"command": "ls -la /app"}, "command('ls -la /app')"),
        ('{"command": "make test"}', "command", {"command": "make test"}, "command('make test')"),
        ("[ -f x ] && echo y", "command", {"command": "[ -f x ] && echo y"}, None),
    ],
)
def test_terminal_reads_keystrokes_objects_and_plain_commands(raw, kind, args, display):
    reading = TERMINAL.read_action(raw)

    assert reading.action is not None
    assert (reading.action.kind, dict(reading.action.args)) == (kind, args)
    assert reading.display == (display or f"command({raw!r})")
    assert reading.raw == reading.action.raw == raw


def test_terminal_keeps_what_it_can_of_odd_keystrokes_and_notes_the_rest():
    reading = TERMINAL.read_action(
        '[{"keystrokes": "ls\\n", "duration": -1}, {"keys": "x"}, {"keystrokes": "pwd\\n"}]'
    )

    assert reading.action is not None
    assert reading.action.args["keystrokes"] == [
        {"keystrokes": "ls\n", "duration": 1.0},
        {"keystrokes": "pwd\n", "duration": 1.0},
    ]
    assert reading.notes == (
        "keystrokes[0].duration -1 is not seconds; read as 1",
        "keystrokes[1] is not a keystrokes object; skipped",
    )


def _call(name: str, arguments: dict[str, object]) -> str:
    """A tool call as agents record it: the arguments are JSON *text*."""
    return json.dumps({"name": name, "arguments": json.dumps(arguments)})


@pytest.mark.parametrize(
    ("raw", "kind", "args", "display", "notes"),
    [
        (
            _call("Bash", {"command": "ls", "description": "List files"}),
            "command",
            {"command": "ls"},
            "Bash(command='ls', description='List files')",
            ("'Bash' is not a studio swe tool; read as a shell command",),
        ),
        (
            json.dumps(
                {
                    "type": "function",
                    "function": {"name": "execute_bash", "arguments": '{"command": "pytest -q"}'},
                }
            ),
            "command",
            {"command": "pytest -q"},
            "execute_bash(command='pytest -q')",
            (),
        ),
        (
            _call("TodoWrite", {"todos": [{"content": "fix", "status": "pending"}]}),
            "tool_call",
            {
                "name": "TodoWrite",
                "arguments": {"todos": [{"content": "fix", "status": "pending"}]},
            },
            "TodoWrite(todos=[{'content': 'fix', 'status': 'pending'}])",
            (
                "'TodoWrite' is not one of the studio's swe tools (execute_bash, "
                "str_replace_editor, think, finish); read without checking",
            ),
        ),
        (
            _call("str_replace_editor", {"command": "view", "path": "src/calc.py"}),
            "str_replace_editor",
            {"command": "view", "path": "src/calc.py"},
            "str_replace_editor(command='view', path='src/calc.py')",
            ("str_replace_editor path must be an absolute path",),
        ),
    ],
)
def test_swe_reads_real_tool_calls_with_json_text_arguments(raw, kind, args, display, notes):
    reading = SWE.read_action(raw)

    assert reading.action is not None
    assert (reading.action.kind, dict(reading.action.args)) == (kind, args)
    assert (reading.display, reading.notes) == (display, notes)


def test_swe_keeps_a_shell_call_without_a_command_as_a_tool_call():
    reading = SWE.read_action('{"name": "bash", "arguments": {"command": " "}}')

    assert reading.action is not None and reading.action.kind == "tool_call"
    assert reading.notes == ("bash has no command; read as a plain tool call",)


def test_swe_reads_a_list_of_calls_as_a_sequence():
    raw = json.dumps(
        [
            {"type": "function", "function": {"name": "think", "arguments": '{"thought": "t"}'}},
            {"name": "bash", "arguments": {"command": "git diff"}},
        ]
    )

    reading = SWE.read_action(raw)

    assert reading.action is not None and reading.action.kind == "sequence"
    assert reading.action.args == {
        "actions": [
            {"kind": "think", "args": {"thought": "t"}},
            {"kind": "command", "args": {"command": "git diff"}},
        ]
    }
    assert reading.display == "think(thought='t'); bash(command='git diff')"
    assert reading.notes == ()


def test_swe_still_reads_plain_commands_and_keystrokes():
    assert SWE.read_action("git status").display == "command('git status')"
    keystrokes = SWE.read_action('[{"keystrokes": "q", "duration": 0.5}]').action
    assert keystrokes is not None and keystrokes.kind == "keystrokes"


def test_mcp_reads_every_real_openai_tool_call_of_a_trace_without_tools():
    calls = [
        call
        for message in tau_bench_messages()
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or []
    ]

    readings = [MCP.read_action(json.dumps(call), TRACE_WORLD) for call in calls]

    assert all(r.action is not None and r.action.kind == "tool_call" for r in readings)
    assert all(r.notes == () for r in readings)
    assert readings[0].action is not None
    assert readings[0].action.args == {
        "name": "get_user_details",
        "arguments": {"user_id": "mia_li_3668"},
    }
    assert readings[0].display == "get_user_details(user_id='mia_li_3668')"


@pytest.mark.parametrize(
    "raw",
    [
        '{"name": "get_user_details", "arguments": {"user_id": "mia_li_3668"}}',
        '{"name": "get_user_details", "arguments": "{\\"user_id\\": \\"mia_li_3668\\"}"}',
        '<tool_call>\n{"name": "get_user_details", "parameters": {"user_id": "mia_li_3668"}}',
    ],
)
def test_mcp_reads_arguments_as_an_object_or_as_json_text(raw):
    reading = MCP.read_action(raw)

    assert reading.action is not None
    assert reading.action.args["arguments"] == {"user_id": "mia_li_3668"}
    assert reading.notes == ()


def test_mcp_reads_qwen_parallel_tool_call_blocks():
    raw = (
        '<tool_call>\n{"name": "get_user_details", "arguments": {"user_id": "u1"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_reservation_details", "arguments": {"reservation_id": "R1"}}'
    )

    reading = MCP.read_action(raw)

    assert reading.display == (
        "get_user_details(user_id='u1'); get_reservation_details(reservation_id='R1')"
    )
    assert MCP.read_action("<tool_call>{oops</tool_call>").action is None


def test_mcp_notes_instead_of_refusing_what_a_world_with_tools_does_not_allow():
    unknown = '{"name": "refund", "arguments": {"amount": 5}}'
    mismatch = '{"name": "calculate", "arguments": {"expression": 7}}'

    read_unknown = MCP.read_action(unknown, CALCULATOR)
    read_mismatch = MCP.read_action(mismatch, CALCULATOR)

    assert read_unknown.action is not None and read_unknown.display == "refund(amount=5)"
    assert read_unknown.notes == ("unknown tool 'refund'; this world's tools are: calculate",)
    assert read_mismatch.action is not None
    assert read_mismatch.notes == (
        "arguments of 'calculate' do not match its input schema: "
        "7 is not of type 'string' (at $.expression)",
    )
    for raw in (unknown, mismatch):
        with pytest.raises(InvalidAction):
            MCP.parse_action(raw, CALCULATOR)


def test_mcp_takes_the_strict_action_when_the_world_accepts_it():
    reading = MCP.read_action(
        '{"name": "calculate", "arguments": {"expression": "2+2"}}', CALCULATOR
    )

    assert reading.action == MCP.parse_action(reading.raw, CALCULATOR)
    assert reading.notes == ()


def test_mcp_reads_a_list_of_parallel_calls_and_notes_odd_arguments():
    reading = MCP.read_action(
        '[{"name": "think", "arguments": {"thought": "t"}}, {"name": "calculate", "arguments": [1]}]'
    )

    assert reading.action is not None and reading.action.kind == "sequence"
    assert [step["args"]["name"] for step in reading.action.args["actions"]] == [
        "think",
        "calculate",
    ]
    assert reading.display == "think(thought='t'); calculate([1])"
    assert reading.notes == (
        "the arguments of 'calculate' are not a JSON object; kept as recorded",
    )


@pytest.mark.parametrize(
    ("raw", "kind", "args", "display"),
    [
        (
            '{"name": "search", "arguments": {"queries": ["zorb capital", "zorb founding"]}}',
            "web_search",
            {"query": ["zorb capital", "zorb founding"]},
            "search(queries=['zorb capital', 'zorb founding'])",
        ),
        (
            '{"name": "search", "arguments": {"query": "zorb capital"}}',
            "web_search",
            {"query": "zorb capital"},
            "search(query='zorb capital')",
        ),
        (
            '{"name": "search", "arguments": "{\\"queries\\": [\\"zorb\\"]}"}',
            "web_search",
            {"query": ["zorb"]},
            "search(queries=['zorb'])",
        ),
        (
            '{"name": "web_search", "arguments": "zorb capital"}',
            "web_search",
            {"query": "zorb capital"},
            "web_search('zorb capital')",
        ),
        (
            '{"name": "visit", "arguments": {"url": "https://zorb.example", "goal": "year"}}',
            "web_extractor",
            {"url": "https://zorb.example", "goal": "year"},
            "visit(url='https://zorb.example', goal='year')",
        ),
        (
            'web_search(query=["a", "b"])',
            "web_search",
            {"query": ["a", "b"]},
            "web_search(query=['a', 'b'])",
        ),
    ],
)
def test_search_reads_real_search_calls(raw, kind, args, display):
    reading = SEARCH.read_action(raw)

    assert reading.action is not None
    assert (reading.action.kind, dict(reading.action.args)) == (kind, args)
    assert (reading.display, reading.notes) == (display, ())


def test_search_keeps_unknown_tools_and_bad_arguments_with_notes():
    unknown = SEARCH.read_action('{"name": "google", "arguments": {"q": "zorb"}}')
    empty = SEARCH.read_action('{"name": "search", "arguments": {"queries": []}}')

    assert unknown.action is not None and unknown.action.kind == "tool_call"
    assert unknown.notes == (
        "'google' is not a search tool (web_search, web_extractor); read without checking",
    )
    assert empty.action is not None and empty.action.kind == "web_search"
    assert empty.notes == ("web_search query must be non-empty text or a non-empty list of text",)


def test_web_reads_the_actions_of_a_real_webarena_run():
    log = (FIXTURES / "web" / "browsergym_webarena_190_12_shopping.log").read_text()
    fenced = [line for line in log.splitlines() if line.startswith("```") and line.endswith("```")]

    readings = [WEB.read_action(raw) for raw in fenced]

    assert [r.display for r in readings][-2:] == [
        "click('227')",
        "send_msg_to_user('The total cost of your latest complete order is $65.32.')",
    ]
    assert all(r.notes == () for r in readings)
    strict = WEB.parse_action('click("227")', World(domain="web", title="Shop"))
    assert readings[-2].action is not None
    assert (readings[-2].action.kind, readings[-2].action.args) == (strict.kind, strict.args)


@pytest.mark.parametrize(
    ("raw", "kind", "args", "display"),
    [
        ("click('12')", "click", {"bid": "12", "button": "left", "modifiers": []}, None),
        ('fill("a12", "white rice")', "fill", {"bid": "a12", "value": "white rice"}, None),
        (
            'browser_navigate(url="https://www.saucedemo.com/")',
            "browser_navigate",
            {"url": "https://www.saucedemo.com/"},
            "browser_navigate(url='https://www.saucedemo.com/')",
        ),
        (
            'browser_click(element="Add to cart", ref="s5e44")',
            "browser_click",
            {"element": "Add to cart", "ref": "s5e44"},
            "browser_click(element='Add to cart', ref='s5e44')",
        ),
        (
            '{"name": "browser_click", "arguments": {"element": "Add to cart", "ref": "s5e44"}}',
            "browser_click",
            {"element": "Add to cart", "ref": "s5e44"},
            "browser_click(element='Add to cart', ref='s5e44')",
        ),
        (
            '{"name": "browser_type", "arguments": "{\\"ref\\": \\"e7\\", \\"text\\": \\"hi\\"}"}',
            "browser_type",
            {"ref": "e7", "text": "hi"},
            "browser_type(ref='e7', text='hi')",
        ),
        ("drag_and_drop('3', '9')", "drag_and_drop", {"from_bid": "3", "to_bid": "9"}, None),
        ("mouse_click(410, 92)", "mouse_click", {"x": 410, "y": 92}, None),
    ],
)
def test_web_reads_browsergym_and_playwright_mcp_calls(raw, kind, args, display):
    reading = WEB.read_action(raw)

    assert reading.action is not None
    assert (reading.action.kind, dict(reading.action.args)) == (kind, args)
    assert (reading.display, reading.notes) == (display or raw.replace('"', "'"), ())


def test_web_reads_several_browsergym_calls_as_a_sequence():
    reading = WEB.read_action("```python\nfill('a12', 'x')\nclick(\"a13\")\n```")

    assert reading.action is not None and reading.action.kind == "sequence"
    assert reading.action.args["actions"] == [
        {"kind": "fill", "args": {"bid": "a12", "value": "x"}},
        {"kind": "click", "args": {"bid": "a13", "button": "left", "modifiers": []}},
    ]
    assert reading.display == "fill('a12', 'x'); click('a13')"


@pytest.mark.parametrize(
    ("raw", "note"),
    [
        ("click()", "click(bid, button=..., modifiers=...): missing argument 'bid'"),
        ("submit_form('3')", "submit_form() is not a BrowserGym or Playwright-MCP action"),
        ("click(target)", "click(): `target` is not a literal value; kept as written"),
        ("browser_click('s5e44')", "browser_click() takes named arguments"),
        ("click('')", "click(): bid is empty"),
        ("click('3', button='top')", "click(): button must be one of left, middle, right"),
    ],
)
def test_web_keeps_odd_calls_with_a_note(raw, note):
    reading = WEB.read_action(raw)

    assert reading.action is not None and reading.display == raw
    assert any(n.startswith(note) for n in reading.notes), reading.notes


def test_web_ids_of_a_playwright_call_or_a_sequence_are_those_of_its_first_step():
    page = read("web/saucedemo_products.aria.yaml")
    click = WEB.read_action('browser_click(element="Add to cart", ref="s5e44")').action
    steps = WEB.read_action("click('12')\nfill('13', 'x')").action
    assert click is not None and steps is not None

    assert WebDomain().referenced_ids(click) == ["s5e44"]
    assert "s5e44" in WebDomain().ids_in(page)
    assert WebDomain().referenced_ids(steps) == ["12"]
    empty = Action(raw="", kind="sequence", args={"actions": []})
    assert AndroidDomain().referenced_ids(empty) == []


def test_web_notes_what_the_studio_would_refuse_in_a_world():
    world = World(domain="web", title="Shop")

    reading = WEB.read_action("click('1')\nclick('2')", world)

    assert reading.action is not None and reading.action.kind == "sequence"
    assert reading.notes[0].startswith("expected exactly one action, found 2")
    with pytest.raises(InvalidAction, match="expected exactly one action"):
        WEB.parse_action(reading.raw, world)


@pytest.mark.parametrize(
    ("raw", "kind", "calls", "display"),
    [
        (
            "pyautogui.click(100, 200)",
            "pyautogui",
            [{"func": "pyautogui.click", "args": [100, 200], "kwargs": {}}],
            "pyautogui.click(100, 200)",
        ),
        (
            "BrowserTools.open_privacy_settings()",
            "python",
            [{"func": "BrowserTools.open_privacy_settings", "args": [], "kwargs": {}}],
            "BrowserTools.open_privacy_settings()",
        ),
        (
            "Agent.click(coordinates=[120, 45])",
            "python",
            [{"func": "Agent.click", "args": [], "kwargs": {"coordinates": [120, 45]}}],
            "Agent.click(coordinates=[120, 45])",
        ),
        (
            'CalcTools.set_cell_value("A1", 3)',
            "python",
            [{"func": "CalcTools.set_cell_value", "args": ["A1", 3], "kwargs": {}}],
            "CalcTools.set_cell_value('A1', 3)",
        ),
    ],
)
def test_os_reads_pyautogui_and_osworld_tool_calls(raw, kind, calls, display):
    reading = OS.read_action(raw)

    assert reading.action is not None
    assert (reading.action.kind, reading.action.args) == (kind, {"calls": calls})
    assert reading.display == display
    if kind == "python":
        func = calls[0]["func"]
        assert reading.notes == (f"not a studio pyautogui action, read without checking: {func}",)


def test_os_reads_a_whole_code_block_with_imports_loops_and_sleeps():
    code = (
        "```python\n"
        "import pyautogui, time\n"
        "for _ in range(3):\n"
        "    pyautogui.press('down')\n"
        "    time.sleep(0.5)\n"
        "x, y = pyautogui.locateCenterOnScreen('ok.png')\n"
        "pyautogui.click(x, y)\n"
        "```"
    )

    reading = OS.read_action(code)

    assert reading.action is not None and reading.action.kind == "python"
    assert [call["func"] for call in reading.action.args["calls"]] == [
        "pyautogui.press",
        "time.sleep",
        "pyautogui.locateCenterOnScreen",
        "pyautogui.click",
    ]
    assert reading.action.args["calls"][3]["args"] == ["x", "y"]
    assert reading.display == (
        "pyautogui.press('down'); time.sleep(0.5); pyautogui.locateCenterOnScreen('ok.png'); …"
    )
    assert reading.notes == (
        "pyautogui.click(): `x` is not a literal value; kept as written",
        "pyautogui.click(): `y` is not a literal value; kept as written",
        "the code also has statements that are not calls (for); only its calls were read",
        "not a studio pyautogui action, read without checking: pyautogui.locateCenterOnScreen",
    )


def test_os_shows_non_literal_arguments_as_written():
    reading = OS.read_action("pyautogui.write(text.upper())")

    assert reading.display == "pyautogui.write(text.upper())"


def test_os_keeps_code_that_is_not_python_with_a_note():
    reading = OS.read_action("click the OK button\nthen wait")

    assert reading.action is not None
    assert (reading.action.kind, reading.action.args) == ("python", {"calls": []})
    assert reading.display == "click the OK button"
    assert reading.notes == ("not valid Python: invalid syntax (line 1); kept as code",)


def test_os_checks_studio_pyautogui_calls_and_reads_the_special_words():
    bad = OS.read_action("pyautogui.hotkey('ctrl', 5)")

    assert bad.action is not None and bad.action.kind == "pyautogui"
    assert bad.notes == ("pyautogui.hotkey(): give the key names as text",)
    assert OS.read_action("DONE").action == Action(raw="DONE", kind="done")


def _invoke(**parameters: object) -> str:
    body = "".join(f'<parameter name="{k}">{v}</parameter>' for k, v in parameters.items())
    return f'<invoke name="phone">{body}</invoke>'


@pytest.mark.parametrize(
    ("raw", "kind", "args", "display"),
    [
        # DroidBot text commands
        (
            "touch <button id=3 bound_box=0,100,200,300>OK</button>",
            "click",
            {"index": 3},
            "click(index=3)",
        ),
        (
            "touch <button bound_box=0,100,200,300>OK</button>",
            "click",
            {"x": 100, "y": 200},
            "click(x=100, y=200)",
        ),
        ("long_touch <div id=7>Photo</div>", "long_press", {"index": 7}, "long_press(index=7)"),
        (
            "set_text <input id=5 bound_box=0,0,10,10>hello world",
            "input_text",
            {"index": 5, "text": "hello world"},
            "input_text(index=5, text='hello world')",
        ),
        (
            "set_text <input id=5>Search</input> cats",
            "input_text",
            {"index": 5, "text": "cats"},
            "input_text(index=5, text='cats')",
        ),
        (
            "scroll up <div id=2 bound_box=0,0,1080,1920></div>",
            "scroll",
            {"index": 2, "direction": "up"},
            "scroll(index=2, direction='up')",
        ),
        ("key_back", "navigate_back", {}, "navigate_back()"),
        ("press BACK", "navigate_back", {}, "navigate_back()"),
        ("press HOME", "navigate_home", {}, "navigate_home()"),
        # Anthropic-style tool calls
        (_invoke(action="click", index=46), "click", {"index": 46}, "click(index=46)"),
        (
            "<function_calls>\n"
            + _invoke(action="input_text", text="fish & chips", index=3)
            + "\n</function_calls>",
            "input_text",
            {"index": 3, "text": "fish & chips"},
            "input_text(index=3, text='fish & chips')",
        ),
        (
            _invoke(action="tap", coordinate="[540, 1200]"),
            "click",
            {"coordinate": [540, 1200]},
            None,
        ),
        # AndroidWorld JSON
        ('{"action_type": "click", "index": 46}', "click", {"index": 46}, "click(index=46)"),
        (
            '{"action_type":"input_text","text":"hi","index":3}',
            "input_text",
            {"index": 3, "text": "hi"},
            "input_text(index=3, text='hi')",
        ),
        (
            '{"action_type":"scroll","direction":"down"}',
            "scroll",
            {"direction": "down"},
            "scroll(direction='down')",
        ),
        ('{"action_type": "tap", "index": "12"}', "click", {"index": 12}, "click(index=12)"),
    ],
)
def test_android_reads_droidbot_invoke_and_androidworld_actions(raw, kind, args, display):
    reading = ANDROID.read_action(raw)

    assert reading.action is not None
    assert (reading.action.kind, dict(reading.action.args)) == (kind, args)
    if display is not None:
        assert (reading.display, reading.notes) == (display, ())


def test_android_reads_several_invokes_as_a_sequence():
    reading = ANDROID.read_action(_invoke(action="swipe", direction="up") + _invoke(action="wait"))

    assert reading.action is not None and reading.action.kind == "sequence"
    assert reading.action.args["actions"] == [
        {"kind": "swipe", "args": {"direction": "up"}},
        {"kind": "wait", "args": {}},
    ]
    assert reading.display == "swipe(direction='up'); wait()"


@pytest.mark.parametrize(
    ("raw", "note"),
    [
        ('{"action_type": "fly"}', "unknown action type 'fly'; read without checking"),
        ("press VOLUME_UP", "unknown action type 'press_key'; read without checking"),
        ('{"action_type": "click", "index": -1}', "click: index must be an integer >= 0"),
        (_invoke(action="scroll", direction="sideways"), 'scroll needs "direction"'),
    ],
)
def test_android_keeps_odd_actions_with_a_note(raw, note):
    reading = ANDROID.read_action(raw)

    assert reading.action is not None
    assert reading.notes[0].startswith(note)


@pytest.mark.parametrize("name", ["mcp", "search", "web", "android"])
@pytest.mark.parametrize("raw", ["¯\\_(ツ)_/¯ no idea", "{not json", '{"answer": 42}'])
def test_garbage_reads_as_no_action_with_a_note(name, raw):
    reading = get_domain(name).read_action(raw)

    assert (reading.raw, reading.action, reading.display) == (raw, None, raw)
    assert reading.notes and all(note.strip() for note in reading.notes)


@pytest.mark.parametrize("name", ["mcp", "search", "terminal", "swe", "web", "os", "android"])
def test_empty_text_reads_as_no_action_in_every_domain(name):
    reading = get_domain(name).read_action("  \n")

    assert reading.action is None and len(reading.notes) == 1


# (domain, an action the strict parser accepts, a world for it)
STRICT_GOOD = [
    ("mcp", '{"name": "calculate", "arguments": {"expression": "1+1"}}', CALCULATOR),
    ("search", 'web_search("capital of Zorbland")', None),
    ("search", '{"name": "web_extractor", "arguments": {"url": "https://z.example"}}', None),
    ("terminal", '[{"keystrokes": "pwd\\n", "duration": 0.1}]', None),
    ("swe", '{"name": "execute_bash", "arguments": {"command": "pytest -q"}}', None),
    ("web", "select_option('s5e24', ['Price (low to high)'])", None),
    ("web", "noop()", None),
    ("os", "import pyautogui\npyautogui.click(960, 540)\npyautogui.hotkey('ctrl', 's')", None),
    ("os", "WAIT", None),
    ("android", '{"action_type": "open_app", "app_name": "YouTube"}', None),
]


@pytest.mark.parametrize(("name", "raw", "world"), STRICT_GOOD)
def test_what_strict_parsing_accepts_reads_alike_and_without_notes(name, raw, world):
    domain = get_domain(name)
    world = world or World(domain=name, title="Typed")
    strict = domain.parse_action(raw, world)

    in_world = domain.read_action(raw, world)
    lenient = domain.read_action(raw)

    assert (in_world.action, in_world.notes) == (strict, ())
    assert lenient.action is not None and lenient.notes == ()
    assert (lenient.action.kind, dict(lenient.action.args)) == (strict.kind, dict(strict.args))


# (domain, an action the strict parser refuses, the start of its message)
STRICT_REFUSED = [
    ("mcp", '{"name": "refund", "arguments": {}}', "unknown tool 'refund'"),
    ("swe", '{"name": "deploy", "arguments": {}}', "unknown tool 'deploy'; swe tools are"),
    ("search", 'google("x")', "unknown tool 'google'"),
    ("web", "submit('1')", "unknown action submit()"),
    ("os", "os.system('reboot')", "os.system() is not allowed"),
    ("android", '{"action_type": "fly"}', "unknown action_type 'fly'"),
    ("terminal", "ls\x00", "the command contains a NUL character"),
]


@pytest.mark.parametrize(("name", "raw", "message"), STRICT_REFUSED)
def test_strict_parsing_still_refuses_what_reading_only_notes(name, raw, message):
    domain = get_domain(name)
    world = CALCULATOR if name == "mcp" else World(domain=name, title="Typed")

    with pytest.raises(InvalidAction, match=None) as caught:
        domain.parse_action(raw, world)
    reading = domain.read_action(raw, world)

    assert str(caught.value).startswith(message)
    assert reading.action is not None
    assert reading.notes[0] == str(caught.value)


def test_a_reader_or_parser_that_breaks_is_a_note_not_an_error():
    class Broken(Domain):
        name = "broken"
        title = "Broken"
        observation_formats = ("text",)
        renderer = "text"

        def system_prompt(self, world: World) -> str:
            return ""

        def parse_action(self, raw: str, world: World) -> Action:
            raise RecursionError

        def read_leniently(self, raw: str) -> ReadAction:
            raise KeyError(raw)

        def detect_format(self, observation: str) -> str | None:
            return None

    reading = Broken().read_action("x", World(domain="broken", title="Broken"))

    assert (reading.action, reading.display) == (None, "x")
    assert reading.notes == ("the action could not be validated (RecursionError)",)
    assert Broken().read_action("x").notes == ("the action could not be read (KeyError)",)


def test_absurdly_nested_json_is_noted_not_raised():
    raw = '{"name": "calculate", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}"

    reading = MCP.read_action(raw, CALCULATOR)

    assert reading.action is None
    assert reading.notes == ("the action could not be validated (RecursionError)",)


def test_a_domain_without_a_reader_imports_with_a_note():
    class Plain(Domain):
        name = "plain"
        title = "Plain"
        observation_formats = ("text",)
        renderer = "text"

        def system_prompt(self, world: World) -> str:
            return ""

        def parse_action(self, raw: str, world: World) -> Action:
            return Action(raw=raw, kind="text")

        def detect_format(self, observation: str) -> str | None:
            return None

    assert Plain().read_action("hi").notes == (
        "the plain domain has no reader for imported actions",
    )
    assert Plain().read_action("hi", World(domain="plain", title="P")).action == Action(
        raw="hi", kind="text"
    )


# Pieces of every action style, so that generated text reaches deep into the readers.
_PIECES = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        '"',
        "'",
        "(",
        ")",
        "\n",
        "\\",
        " ",
        "=",
        "<",
        ">",
        "/",
        '"name"',
        '"arguments"',
        '"function"',
        '"tool_calls"',
        '"keystrokes"',
        '"duration"',
        '"command"',
        '"action_type"',
        '"index"',
        '"text"',
        '"click"',
        "null",
        "true",
        "-1",
        "46",
        "```",
        "```python\n",
        "<tool_call>",
        "</tool_call>",
        '<invoke name="phone">',
        "</invoke>",
        '<parameter name="action">',
        '<parameter name="index">',
        "</parameter>",
        "touch ",
        "set_text ",
        "scroll up ",
        "press ",
        "key_back",
        "<button id=",
        "bound_box=",
        "</button>",
        "click(",
        "browser_click(",
        "pyautogui.",
        "time.sleep(",
        "Agent.",
        "for i in x:\n    ",
        "import pyautogui\n",
        "x = ",
        "*",
        "**",
        "lambda: ",
        "DONE",
    ]  # fmt: skip
)
_TEXT = st.one_of(
    st.text(),
    st.lists(st.one_of(_PIECES, st.text(max_size=3)), max_size=30).map("".join),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.sampled_from(["name", "arguments", "action_type", "index"]), inner)
        ),
        max_leaves=12,
    ).map(json.dumps),
)


@settings(max_examples=300, deadline=None)
@given(raw=_TEXT)
def test_read_action_never_raises_for_any_text_in_any_domain(raw):
    for name in domain_names():
        domain = get_domain(name)
        world = CALCULATOR if name == "mcp" else World(domain=name, title="Any")
        for reading in (domain.read_action(raw), domain.read_action(raw, world)):
            assert reading.raw == raw
            assert isinstance(reading.display, str)
            assert all(isinstance(note, str) and note for note in reading.notes)
            assert reading.action is not None or reading.notes
            assert reading.action is None or reading.action.raw == raw
            # The safety net in read_action is for bugs; the readers themselves hold.
            assert not any(n.startswith("the action could not be read") for n in reading.notes)
