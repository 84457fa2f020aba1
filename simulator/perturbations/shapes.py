"""Observation shapes that enforced perturbations must preserve.

An enforced error or overlay is only believable when it looks like the domain's
own output: an mcp tool answers a JSON error object, a shell prints ``bash: ...``
and a new prompt, a browser shows an error page in whatever form the agent reads
(HTML, BrowserGym accessibility tree, Playwright ARIA snapshot), an Android UI
dump gains a dialog node. Which format that is, the domain says
(:meth:`simulator.domains.Domain.format_of`); these helpers write it.
"""

from __future__ import annotations

import json
import re
from html import escape as html_escape
from typing import Any
from xml.sax.saxutils import quoteattr

from simulator.domains import get_domain
from simulator.domains.base import (
    ANDROID_ELEMENTS,
    ARIA_YAML,
    AXTREE,
    HTML,
    JSON,
    OS_A11Y,
    TERMINAL,
    TEXT,
    UIAUTOMATOR_XML,
)
from simulator.observations import detect_format

_PROMPT_LINE = re.compile(r"^[^\n]*[$#>] ?$")
_BID = re.compile(r"\[(\d+)\]")


class NotJson:
    """Marker for text that is not JSON."""


NOT_JSON = NotJson()


def load_json(text: str) -> Any:
    """The parsed JSON value, or :data:`NOT_JSON`."""
    try:
        return json.loads(text)
    except ValueError:
        return NOT_JSON


def dump_json(value: Any, like: str) -> str:
    """Serialise ``value`` in the same style (indented or compact) as ``like``."""
    indent = 2 if "\n" in like.strip() else None
    return json.dumps(value, ensure_ascii=False, indent=indent)


def observation_format(observation: str, domain: str) -> str:
    """The format to write a change to ``observation`` in, as its domain judges it.

    A domain that is not registered (a custom one in another process) is judged by
    the text alone.
    """
    try:
        return get_domain(domain).format_of(observation)
    except KeyError:
        return detect_format(observation) or TEXT


def prompt_line(observation: str) -> str:
    """The shell prompt that ends a terminal screen, or "" when none is seen."""
    last = observation.rstrip("\n").rpartition("\n")[2]
    return last if _PROMPT_LINE.match(last) else ""


def command_text(action: str) -> str:
    """The command line of a shell action: plain text, or the keystrokes of a JSON action."""
    text = action.strip()
    if text.startswith(("[", "{")):
        data = load_json(text)
        if isinstance(data, list) and data and isinstance(data[0], dict):
            text = str(data[0].get("keystrokes", "")).strip()
        elif isinstance(data, dict):
            text = str(data.get("keystrokes", data.get("command", ""))).strip()
    return text.split("\n")[0]


def command_name(action: str) -> str:
    """The command word of a shell action."""
    words = command_text(action).split()
    return words[0] if words else "command"


def error_observation(fmt: str, message: str, *, code: int, action: str, previous: str) -> str:
    """An error written the way this domain and format would show it."""
    if fmt == TERMINAL:
        error = f"bash: {command_name(action)}: {message}"
        prompt = prompt_line(previous)
        if not prompt:
            return error
        return f"{prompt.rstrip()} {command_text(action)}\n{error}\n{prompt}"
    if fmt == JSON:
        return dump_json({"error": {"code": code, "message": message}}, previous)
    if fmt == HTML:
        return (
            f"<!DOCTYPE html>\n<html><head><title>{code} Error</title></head>"
            f"<body><h1>{code} Error</h1><p>{html_escape(message)}</p></body></html>"
        )
    if fmt == AXTREE:
        return f"RootWebArea '{code} Error', focused\n\t[1] heading '{code} Error'\n\tStaticText {_sq(message)}"
    if fmt == ARIA_YAML:
        return f'- heading "{code} Error" [level=1] [ref=e1]\n- paragraph [ref=e2]: {_dq(message)}'
    if fmt in (UIAUTOMATOR_XML, ANDROID_ELEMENTS, OS_A11Y):
        return dialog_only(fmt, "Error", message, ["OK"])
    return f"Error {code}: {message}"


def dialog_only(fmt: str, title: str, text: str, buttons: list[str]) -> str:
    """A screen that shows nothing but a dialog (used for errors)."""
    if fmt == UIAUTOMATOR_XML:
        return (
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n"
            f'<hierarchy rotation="0">\n{_android_dialog(title, text, buttons)}\n</hierarchy>'
        )
    return _text_dialog(fmt, title, text, buttons, first_id=1)


def overlay(fmt: str, observation: str, title: str, text: str, buttons: list[str]) -> str | None:
    """The observation with a dialog on top, or None when ``fmt`` is not a GUI format."""
    if fmt == HTML:
        buttons_html = "".join(f"<button>{html_escape(b)}</button>" for b in buttons)
        node = (
            f'<div role="dialog" aria-modal="true" aria-label={quoteattr(title)} '
            'style="position:fixed;inset:0;z-index:2147483647;background:#fff">'
            f"<h2>{html_escape(title)}</h2><p>{html_escape(text)}</p>{buttons_html}</div>"
        )
        match = re.search(r"<body\b[^>]*>", observation, re.IGNORECASE)
        if match:
            return observation[: match.end()] + node + observation[match.end() :]
        return node + observation
    if fmt == UIAUTOMATOR_XML:
        node = _android_dialog(title, text, buttons)
        index = observation.rfind("</hierarchy>")
        if index < 0:
            return observation.rstrip("\n") + "\n" + node
        return observation[:index] + node + "\n" + observation[index:]
    if fmt in (AXTREE, ARIA_YAML, OS_A11Y, ANDROID_ELEMENTS):
        ids = [int(m) for m in _BID.findall(observation)] or [0]
        dialog = _text_dialog(fmt, title, text, buttons, first_id=max(ids) + 1)
        if fmt == AXTREE and observation.startswith("RootWebArea"):
            head, _, rest = observation.partition("\n")
            indented = "\n".join("\t" + line for line in dialog.split("\n"))
            return f"{head}\n{indented}\n{rest}" if rest else f"{head}\n{indented}"
        return f"{dialog}\n{observation}"
    return None


def _text_dialog(fmt: str, title: str, text: str, buttons: list[str], *, first_id: int) -> str:
    ids = iter(range(first_id, first_id + 2 + len(buttons)))
    if fmt == ARIA_YAML:
        lines = [f'- dialog "{_dq(title)}" [ref=e{next(ids)}]:', f"  - paragraph: {_dq(text)}"]
        lines += [f'  - button "{_dq(b)}" [ref=e{next(ids)}]' for b in buttons]
        return "\n".join(lines)
    if fmt == ANDROID_ELEMENTS:
        lines = [
            f'UI element {next(ids)}: dialog "{title}"',
            f'UI element {next(ids)}: text "{text}"',
        ]
        lines += [f'UI element {next(ids)}: button "{b}" (clickable)' for b in buttons]
        return "\n".join(lines)
    role = "dialog" if fmt == AXTREE else "alert"
    lines = [f"[{next(ids)}] {role} {_sq(title)}, modal=True", f"\tStaticText {_sq(text)}"]
    lines += [f"\t[{next(ids)}] button {_sq(b)}" for b in buttons]
    return "\n".join(lines)


def _android_dialog(title: str, text: str, buttons: list[str]) -> str:
    def node(cls: str, label: str, rid: str, clickable: bool) -> str:
        return (
            f'<node index="0" text={quoteattr(label)} resource-id="android:id/{rid}" '
            f'class="{cls}" package="android" content-desc="" clickable="{str(clickable).lower()}" '
            'enabled="true" bounds="[80,1100][1264,1900]" />'
        )

    children = [
        node("android.widget.TextView", title, "alertTitle", False),
        node("android.widget.TextView", text, "message", False),
    ] + [node("android.widget.Button", b, f"button{i + 1}", True) for i, b in enumerate(buttons)]
    inner = "\n".join("    " + c for c in children)
    return (
        '<node index="0" text="" resource-id="android:id/parentPanel" class="android.widget.FrameLayout" '
        'package="android" content-desc="dialog" clickable="false" enabled="true" '
        f'bounds="[80,1100][1264,1900]">\n{inner}\n</node>'
    )


def _sq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", " ") + "'"


def _dq(text: str) -> str:
    return text.replace('"', '\\"').replace("\n", " ")
