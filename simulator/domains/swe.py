"""Software engineering in a repository: shell commands plus OpenHands-style editor tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from simulator.domains._calls import parse_json_call
from simulator.domains._prompt import build_prompt
from simulator.domains._readers import ToolCall, read_tool_calls, sequence
from simulator.domains._shell import (
    SCREEN_FORMAT,
    SHELL_FIELDS,
    files_section,
    machine_section,
    parse_shell_action,
    read_shell,
    shell_extras_problems,
)
from simulator.domains.base import TERMINAL, Action, Domain, ReadAction
from simulator.domains.forms import Composer, EditorField
from simulator.errors import InvalidAction

if TYPE_CHECKING:
    from simulator.world import World

_ROLE = """\
You are the world model of a software project's development machine. An agent works \
on the repository through a shell and a file editor (OpenHands/SWE-agent tools); you \
play the shell, the file system, the interpreters, test runners and version control, \
and return what each action prints."""

_RULES = (
    "The repository's files, git history and installed packages persist between actions "
    "exactly as the actions left them; edits are visible to every later command.",
    "Test runners, compilers and linters report the results the code as it now stands "
    "would really produce, including tracebacks with plausible line numbers.",
    "The seed files below exist at the start, with exactly the content given.",
)

_FORMAT = (
    SCREEN_FORMAT
    + """
For editor tools, return what OpenHands' `str_replace_editor` prints: `view` shows the \
file with line numbers (`cat -n` style) or a directory listing, `create` confirms the \
file was created, `str_replace`/`insert` confirm the edit and show a snippet of the \
edited region with line numbers, and a failed edit explains why (e.g. `old_str` not \
found or not unique)."""
)

_EDITOR_REQUIRED = {
    "view": ("path",),
    "create": ("path", "file_text"),
    "str_replace": ("path", "old_str"),
    "insert": ("path", "insert_line", "new_str"),
    "undo_edit": ("path",),
}
_SHELL_TOOLS = ("execute_bash", "bash")


def _editor(raw: str, arguments: dict[str, Any]) -> Action:
    command = arguments.get("command")
    if command not in _EDITOR_REQUIRED:
        raise InvalidAction(
            f"str_replace_editor command must be one of {', '.join(_EDITOR_REQUIRED)}, "
            f"got {command!r}"
        )
    missing = [key for key in _EDITOR_REQUIRED[command] if key not in arguments]
    if missing:
        raise InvalidAction(f"str_replace_editor {command} needs {', '.join(missing)}")
    if not isinstance(arguments["path"], str) or not arguments["path"].startswith("/"):
        raise InvalidAction("str_replace_editor path must be an absolute path")
    line = arguments.get("insert_line", 0)
    if isinstance(line, bool) or not isinstance(line, int) or line < 0:
        raise InvalidAction("str_replace_editor insert_line must be an integer >= 0")
    return Action(raw=raw, kind="str_replace_editor", args=arguments)


def _read_call(raw: str, call: ToolCall) -> ReadAction:
    """One recorded tool call; a tool the studio does not know is kept, with a note.

    Real agents name their shell differently (Claude Code's ``Bash``), so any
    ``bash``-like tool with a command reads as a command, which verifiers check.
    """
    notes = list(call.notes)
    arguments = dict(call.arguments) if isinstance(call.arguments, Mapping) else {}
    command = call.arguments if isinstance(call.arguments, str) else arguments.get("command")
    if call.name.lower() in _SHELL_TOOLS and isinstance(command, str) and command.strip():
        if call.name not in _SHELL_TOOLS:
            notes.append(f"{call.name!r} is not a studio swe tool; read as a shell command")
        action = Action(raw=raw, kind="command", args={"command": command})
    elif call.name.lower() in _SHELL_TOOLS:
        notes.append(f"{call.name} has no command; read as a plain tool call")
        action = Action(
            raw=raw, kind="tool_call", args={"name": call.name, "arguments": call.arguments}
        )
    elif call.name == "str_replace_editor":
        try:
            _editor(raw, arguments)
        except InvalidAction as error:
            notes.append(str(error))
        action = Action(raw=raw, kind="str_replace_editor", args=arguments)
    elif call.name in ("think", "finish"):
        action = Action(raw=raw, kind=call.name, args=arguments)
    else:
        notes.append(
            f"{call.name!r} is not one of the studio's swe tools (execute_bash, "
            "str_replace_editor, think, finish); read without checking"
        )
        action = Action(
            raw=raw, kind="tool_call", args={"name": call.name, "arguments": call.arguments}
        )
    return ReadAction(raw=raw, action=action, display=call.display(), notes=tuple(notes))


class SweDomain(Domain):
    """Shell commands and keystrokes as in terminal, plus editor/think/finish tool calls."""

    name = "swe"
    title = "Software engineering"
    observation_formats = (TERMINAL,)
    renderer = TERMINAL
    action_fence = "json"
    allows_empty_observation = True
    example_action = "git status"
    initial_label = "Initial screen"
    initial_help = "The terminal in the repository, before the first command."
    starter_observation = "dev@build:~/project$ "
    editor_fields = (
        EditorField("repository", "Repository", "text", "Name or URL of the repository."),
        *SHELL_FIELDS,
    )

    def system_prompt(self, world: World) -> str:
        repository = world.extras.get("repository", "")
        return build_prompt(
            world,
            role=_ROLE,
            sections=[
                ("Machine", machine_section(world.extras)),
                ("Repository", str(repository)),
                ("Seed files", files_section(world.extras)),
            ],
            rules=_RULES,
            observation_format=_FORMAT,
        )

    def parse_action(self, raw: str, world: World) -> Action:
        try:
            call = parse_json_call(raw)
        except ValueError as error:
            if '"keystrokes"' in raw or '"command"' in raw:
                # {"keystrokes": ...} / {"command": ...} objects are terminal-style actions.
                return parse_shell_action(raw)
            raise InvalidAction(str(error)) from None
        if call is None:
            return parse_shell_action(raw)
        name, arguments = call
        if name in _SHELL_TOOLS:
            command = arguments.get("command")
            if not isinstance(command, str) or not command.strip():
                raise InvalidAction(f"{name} needs a non-empty text 'command'")
            return Action(raw=raw, kind="command", args={"command": command})
        if name == "str_replace_editor":
            return _editor(raw, arguments)
        if name in ("think", "finish"):
            return Action(raw=raw, kind=name, args=arguments)
        raise InvalidAction(
            f"unknown tool {name!r}; swe tools are execute_bash, str_replace_editor, think, "
            "finish (or send a plain shell command)"
        )

    def read_leniently(self, raw: str) -> ReadAction:
        """Tool calls in any common shape (one or a list), else a command or keystrokes."""
        calls = read_tool_calls(raw)
        if calls is None:
            return read_shell(raw)
        return sequence(raw, [_read_call(raw, call) for call in calls])

    def composer(self, world: World, observation: str) -> Composer:
        """A shell's composer is its command line."""
        return Composer(action_label="Command", action_placeholder=self.example_action)

    def validate_extras(self, extras: Mapping[str, Any]) -> list[str]:
        problems = shell_extras_problems(extras)
        if not isinstance(extras.get("repository", ""), str):
            problems.append("repository: must be text")
        return problems
