"""What terminal and swe share: keystroke/command actions and the machine description."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from simulator.domains._calls import strip_fence
from simulator.domains._prompt import dump_json
from simulator.domains._readers import format_call, load_json
from simulator.domains.base import Action, ReadAction, unread
from simulator.domains.forms import EditorField
from simulator.errors import InvalidAction

MAX_COMMAND_CHARS = 100_000

#: The world editor's fields for the machine: what :func:`machine_section` and
#: :func:`files_section` read.
SHELL_FIELDS = (
    EditorField("hostname", "Host name", "text"),
    EditorField("user", "User", "text"),
    EditorField("cwd", "Working directory", "text"),
    EditorField("files", "Seed files", "json", 'JSON: {"path": "content", ...}'),
)


def _keystrokes(raw: str, data: Any) -> Action:
    entries = data if isinstance(data, list) else [data]
    if not entries:
        raise InvalidAction("the keystrokes list is empty")
    steps = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("keystrokes"), str):
            raise InvalidAction(
                f'keystrokes[{index}] must be an object like {{"keystrokes": "ls\\n", '
                '"duration": 0.1}'
            )
        duration = entry.get("duration", 1.0)
        if isinstance(duration, bool) or not isinstance(duration, int | float) or duration < 0:
            raise InvalidAction(f"keystrokes[{index}].duration must be a number of seconds >= 0")
        steps.append({"keystrokes": entry["keystrokes"], "duration": float(duration)})
    return Action(raw=raw, kind="keystrokes", args={"keystrokes": steps})


def parse_shell_action(raw: str) -> Action:
    """A plain command, or a JSON keystrokes list ``[{"keystrokes": "pwd\\n", "duration": 0.1}]``.

    Text that starts like JSON but does not parse is a command (``[ -f x ] && echo y``
    is valid shell); text that parses as JSON must be a keystrokes list or object.
    """
    if "\x00" in raw:
        raise InvalidAction("the command contains a NUL character")
    if len(raw) > MAX_COMMAND_CHARS:
        raise InvalidAction(f"the command is longer than {MAX_COMMAND_CHARS} characters")
    text = strip_fence(raw)
    if text[:1] in ("[", "{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, list | dict):
            if isinstance(data, dict) and isinstance(data.get("command"), str):
                text = data["command"].strip()
            else:
                return _keystrokes(raw, data)
    if not text:
        raise InvalidAction("the command is empty")
    return Action(raw=raw, kind="command", args={"command": text})


def machine_section(extras: Mapping[str, Any]) -> str:
    """The host, user and working directory the prompt line shows."""
    user = str(extras.get("user", "root"))
    hostname = str(extras.get("hostname", "host"))
    cwd = str(extras.get("cwd", "/root" if user == "root" else f"/home/{user}"))
    shell = str(extras.get("shell", "bash"))
    sign = "#" if user == "root" else "$"
    return (
        f"User: {user}\nHostname: {hostname}\nWorking directory: {cwd}\nShell: {shell}\n"
        f"Prompt: `{user}@{hostname}:{cwd}{sign} ` (the directory part follows `cd`)"
    )


def files_section(extras: Mapping[str, Any]) -> str:
    """The seed files, as given (a mapping of path to content, or a list of entries)."""
    files = extras.get("files")
    return dump_json(files) if files else ""


def shell_extras_problems(extras: Mapping[str, Any]) -> list[str]:
    """Type problems with hostname/user/cwd/files."""
    problems = [
        f"{key}: must be text"
        for key in ("hostname", "user", "cwd", "shell")
        if key in extras and not isinstance(extras[key], str)
    ]
    files = extras.get("files", {})
    if isinstance(files, Mapping):
        problems += [
            f"files[{path!r}]: content must be text"
            for path, content in files.items()
            if not isinstance(content, str)
        ]
    elif isinstance(files, list):
        problems += [
            f"files[{index}]: must be an object with text path and content"
            for index, entry in enumerate(files)
            if not (
                isinstance(entry, Mapping)
                and isinstance(entry.get("path"), str)
                and isinstance(entry.get("content", ""), str)
            )
        ]
    else:
        problems.append("files: must map paths to contents, or list {path, content} entries")
    return problems


SCREEN_FORMAT = """\
Exactly the text the terminal shows after the action: the prompt line with the typed \
command echoed, the command's output (stdout and stderr interleaved as a terminal \
shows them), then the new prompt on the last line. If the command is still running \
when the keystroke's duration ends, show its output so far and no new prompt. No \
Markdown fences, no commentary."""


def _read_keystrokes(raw: str, data: Any) -> ReadAction | None:
    """A keystrokes list or object, leniently; None when ``data`` holds no keystrokes."""
    entries = data if isinstance(data, list) else [data]
    steps: list[dict[str, Any]] = []
    notes: list[str] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("keystrokes"), str):
            notes.append(f"keystrokes[{index}] is not a keystrokes object; skipped")
            continue
        duration = entry.get("duration", 1.0)
        if isinstance(duration, bool) or not isinstance(duration, int | float) or duration < 0:
            notes.append(f"keystrokes[{index}].duration {duration!r} is not seconds; read as 1")
            duration = 1.0
        steps.append({"keystrokes": entry["keystrokes"], "duration": float(duration)})
    if not steps:
        return None
    display = "; ".join(
        format_call("keystrokes", (step["keystrokes"],), {"duration": step["duration"]})
        for step in steps
    )
    action = Action(raw=raw, kind="keystrokes", args={"keystrokes": steps})
    return ReadAction(raw=raw, action=action, display=display, notes=tuple(notes))


def read_shell(raw: str) -> ReadAction:
    """A plain command or keystrokes, read leniently: odd entries are skipped with a note.

    Any non-empty text is a command (real shells accept what they accept), so only
    empty text reads as nothing.
    """
    text = strip_fence(raw)  # not loose_text: `backticks` are shell syntax
    data = load_json(text) if text[:1] in ("[", "{") else None
    notes = []
    if isinstance(data, dict) and isinstance(data.get("command"), str):
        text = data["command"].strip()
    elif isinstance(data, list | dict):
        keystrokes = _read_keystrokes(raw, data)
        if keystrokes is not None:
            return keystrokes
        notes.append("JSON that holds no keystrokes; read as a command")
    if not text:
        return unread(raw, "the action is empty")
    if "\x00" in text:
        notes.append("the command contains a NUL character")
    if len(text) > MAX_COMMAND_CHARS:
        notes.append(f"the command is longer than {MAX_COMMAND_CHARS} characters")
    action = Action(raw=raw, kind="command", args={"command": text})
    display = format_call("command", (text,))
    return ReadAction(raw=raw, action=action, display=display, notes=tuple(notes))
