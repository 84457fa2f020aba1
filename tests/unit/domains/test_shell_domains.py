"""terminal and swe: plain commands, keystroke lists, and swe's editor tool calls."""

from __future__ import annotations

import json

import pytest

from simulator.domains import get_domain
from simulator.errors import InvalidAction
from simulator.world import World
from tests.unit.verifiers._fixtures import FIXTURES, terminal_triples

TERMINAL = get_domain("terminal")
SWE = get_domain("swe")
WORLD = World(domain="terminal", title="Box")


def test_it_parses_every_recorded_command_as_a_command():
    for name, triple in terminal_triples():
        domain = get_domain(triple["domain"])
        for raw in (triple["action"], *(h["action"] for h in triple["history"])):
            action = domain.parse_action(raw, WORLD)
            assert action.kind == "command", name
            assert action.args["command"] == raw.strip()


def test_it_parses_the_agentworldbench_keystrokes():
    row = json.loads(
        (FIXTURES / "agentworldbench" / "synthetic_terminal.jsonl").read_text().splitlines()[0]
    )
    raw = row["current_prompt"].split("```json\n")[1].split("\n```")[0]

    action = TERMINAL.parse_action(raw, WORLD)

    assert action.kind == "keystrokes"
    assert action.args["keystrokes"] == [{"keystrokes": "pwd\n", "duration": 0.1}]


@pytest.mark.parametrize("domain", [TERMINAL, SWE])
def test_shell_like_text_that_looks_like_json_is_a_command(domain):
    assert domain.parse_action("[ -f x ] && echo y", WORLD).kind == "command"
    assert (
        domain.parse_action("{ echo a; echo b; }", WORLD).args["command"] == "{ echo a; echo b; }"
    )
    assert domain.parse_action('{"command": "ls -la"}', WORLD).args == {"command": "ls -la"}
    single = domain.parse_action('{"keystrokes": "C-c", "duration": 1}', WORLD)
    assert single.args["keystrokes"] == [{"keystrokes": "C-c", "duration": 1.0}]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("   ", "the command is empty"),
        ("ls\x00", "NUL character"),
        ("x" * 100_001, "longer than 100000 characters"),
        ("[]", "the keystrokes list is empty"),
        ("[1]", 'keystrokes[0] must be an object like {"keystrokes"'),
        ('[{"keystrokes": "ls\\n", "duration": -1}]', "keystrokes[0].duration must be a number"),
        ('[{"keystrokes": "ls\\n", "duration": true}]', "keystrokes[0].duration must be a number"),
    ],
)
def test_it_rejects_bad_terminal_actions(raw, message):
    with pytest.raises(InvalidAction) as caught:
        TERMINAL.parse_action(raw, WORLD)

    assert message in str(caught.value)


def test_swe_accepts_openhands_tool_calls():
    bash = SWE.parse_action(
        '{"name": "execute_bash", "arguments": {"command": "pytest -q"}}', WORLD
    )
    edit = SWE.parse_action(
        json.dumps(
            {
                "name": "str_replace_editor",
                "arguments": {
                    "command": "str_replace",
                    "path": "/r/calc.py",
                    "old_str": "a - b",
                    "new_str": "a + b",
                },
            }
        ),
        WORLD,
    )
    think = SWE.parse_action(
        '{"name": "think", "arguments": {"thought": "the sign is wrong"}}', WORLD
    )

    assert (bash.kind, bash.args) == ("command", {"command": "pytest -q"})
    assert edit.kind == "str_replace_editor"
    assert edit.args["old_str"] == "a - b"
    assert think.kind == "think"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"command": "delete", "path": "/r/a.py"}, "command must be one of view, create"),
        ({"command": "create", "path": "/r/a.py"}, "str_replace_editor create needs file_text"),
        ({"command": "view", "path": "r/a.py"}, "path must be an absolute path"),
        (
            {"command": "insert", "path": "/r/a.py", "insert_line": -2, "new_str": "x"},
            "insert_line must be an integer >= 0",
        ),
    ],
)
def test_swe_rejects_bad_editor_calls(arguments, message):
    raw = json.dumps({"name": "str_replace_editor", "arguments": arguments})

    with pytest.raises(InvalidAction) as caught:
        SWE.parse_action(raw, WORLD)

    assert message in str(caught.value)


def test_swe_rejects_unknown_tools_and_empty_bash():
    with pytest.raises(InvalidAction, match="unknown tool 'deploy'; swe tools are"):
        SWE.parse_action('{"name": "deploy", "arguments": {}}', WORLD)
    with pytest.raises(InvalidAction, match="bash needs a non-empty text 'command'"):
        SWE.parse_action('{"name": "bash", "arguments": {"command": " "}}', WORLD)
    with pytest.raises(InvalidAction, match='a tool call needs a "name"'):
        SWE.parse_action('{"tool": "x"}', WORLD)


def test_it_validates_shell_extras():
    good = {"hostname": "forge", "user": "ana", "cwd": "/home/ana", "files": {"/a": "x"}}

    assert TERMINAL.validate_extras(good) == []
    assert TERMINAL.validate_extras({"user": 1, "files": {"/a": 2}}) == [
        "user: must be text",
        "files['/a']: content must be text",
    ]
    assert TERMINAL.validate_extras({"files": [{"path": "/a"}, {"content": "x"}]}) == [
        "files[1]: must be an object with text path and content"
    ]
    assert TERMINAL.validate_extras({"files": "x"}) == [
        "files: must map paths to contents, or list {path, content} entries"
    ]
    assert SWE.validate_extras({"repository": ["x"]}) == ["repository: must be text"]
