"""read_action: real agent traces of every style are read, never refused; notes say what is odd."""

from __future__ import annotations

import json

import pytest

from simulator.domains import get_domain
from tests.unit.verifiers._fixtures import FIXTURES

TERMINAL = get_domain("terminal")
SWE = get_domain("swe")


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
