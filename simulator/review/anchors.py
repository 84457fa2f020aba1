"""Anchors: the few facts of an observation an agent acts on, compared real vs simulated.

A full diff of two web pages is mostly noise (element ids, layout). Anchors pick
what matters for each domain:

- **web**: URL, title, focused element, open modal/dialog, form values, visible
  headings and rows (accessibility tree, ARIA snapshot or HTML);
- **android**: screen/activity, visible texts, focused and checked elements
  (uiautomator XML or numbered element lists);
- **terminal** / **swe**: output lines (prompt lines left out), exit status, cwd;
- **os**: focused element, windows/dialogs, visible texts;
- **mcp** / **search**: top-level JSON keys, error flag, result count.

:func:`compare_anchors` gives one :class:`AnchorDiff` per anchor found on either side.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from simulator.axtree import AxNode, axtree_lines
from simulator.domains.base import AXTREE
from simulator.observations import detect_format

Anchors = dict[str, Any]
MAX_ITEMS = 40

_URL = re.compile(r"""url=['"]([^'"]+)['"]""")
_ROOT = re.compile(r"""RootWebArea\s+['"]([^'"]*)['"]""")
_AX_LINE = re.compile(r"""^\s*(?:\[[^\]]+\]\s+)?(\w+)\s+['"]([^'"]*)['"](.*)$""")
_ARIA_LINE = re.compile(r"""^\s*-\s+(\w+)\s+"([^"]*)"(.*)$""")
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HTML_HEADING = re.compile(r"<h[1-3][^>]*>(.*?)</h[1-3]>", re.IGNORECASE | re.DOTALL)
_HTML_INPUT = re.compile(r"<input\b([^>]*)>", re.IGNORECASE)
_HTML_ATTR = re.compile(r"""(\w[\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_TAGS = re.compile(r"<[^>]+>")
_PROMPT = re.compile(r"^(?:\([^)]*\)\s*)?[\w.-]+@[\w.-]+:(?P<cwd>[^\s#$]*)\s*[#$]\s?(?P<cmd>.*)$")
_SIMPLE_PROMPT = re.compile(r"^[$#>]\s")
_EXIT = re.compile(
    r"(?:exit(?:ed)?\s*(?:code|status)?\s*[:=]?\s*|\[exit\s+|returned\s+)(-?\d+)", re.IGNORECASE
)
_XML_NODE = re.compile(r"<node\b([^>]*)/?>", re.IGNORECASE)
_ELEMENT_LINE = re.compile(r"^\s*(?:UI element\s+)?\d+\s*[:.)-]\s*(.*)$", re.IGNORECASE)


def _clip(items: list[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        item = " ".join(item.split())
        if item and item not in seen:
            seen.append(item)
    return seen[:MAX_ITEMS]


def _attrs(text: str) -> dict[str, str]:
    return {
        m.group(1).lower(): html.unescape(m.group(2) or m.group(3) or "")
        for m in _HTML_ATTR.finditer(text)
    }


@dataclass(frozen=True)
class _Element:
    """A page element as the web anchors need it, whichever format it was read from."""

    role: str
    name: str
    focused: bool
    modal: bool
    value: str
    checked: bool


# How an accessibility tree prints "true": a bare flag (BrowserGym ``focused``), a repr
# (``expanded=True``), a tristate string (``checked='true'``).
_TRUE = frozenset({"", "True", "true"})


def _tree_elements(nodes: list[AxNode]) -> list[_Element]:
    """Elements of an accessibility tree, read with the verifiers' grammar."""
    elements = []
    for node in nodes:
        props = dict(node.properties)
        elements.append(
            _Element(
                role=node.role.lower(),
                name=node.name,
                focused=props.get("focused") in _TRUE,
                modal=props.get("modal") in _TRUE,
                value=props.get("value", ""),
                checked=props.get("checked") in _TRUE,
            )
        )
    return elements


def _line_elements(text: str) -> list[_Element]:
    """Elements of an ARIA snapshot, or of text shaped loosely like a tree, line by line."""
    elements = []
    for line in text.splitlines():
        match = _AX_LINE.match(line) or _ARIA_LINE.match(line)
        if not match:
            continue
        role, name, rest = match.group(1).lower(), match.group(2), match.group(3)
        value = re.search(r"""value=['"]([^'"]*)['"]|:\s*(.+)$""", rest)
        elements.append(
            _Element(
                role=role,
                name=name,
                focused="focused" in rest,
                modal="modal" in rest,
                value=(value.group(1) or value.group(2)) if value else "",
                checked="checked" in rest and "checked=false" not in rest,
            )
        )
    return elements


def web_anchors(observation: str) -> Anchors:
    """URL, title, focused, dialog, form values, headings and rows of a web observation."""
    text = observation
    anchors: Anchors = {}
    is_tree = detect_format(text, [AXTREE]) == AXTREE
    nodes = axtree_lines(text) if is_tree else []
    root = next((node for node in nodes if node.role == "RootWebArea"), None)
    url = _URL.search(text)
    if root and dict(root.properties).get("url"):
        anchors["url"] = dict(root.properties)["url"]
    elif url:
        anchors["url"] = url.group(1)
    title = _HTML_TITLE.search(text)
    root_title = _ROOT.search(text)
    if root:
        anchors["title"] = root.name
    elif root_title:
        anchors["title"] = root_title.group(1)
    elif title:
        anchors["title"] = html.unescape(_TAGS.sub("", title.group(1))).strip()
    focused: list[str] = []
    dialogs: list[str] = []
    forms: list[str] = []
    headings: list[str] = []
    rows: list[str] = []
    for element in _tree_elements(nodes) if is_tree else _line_elements(text):
        role, name = element.role, element.name
        if role == "rootwebarea":
            continue
        if element.focused:
            focused.append(f"{role} '{name}'")
        if role in {"dialog", "alertdialog"} or element.modal:
            dialogs.append(f"{role} '{name}'")
        if role in {"textbox", "combobox", "searchbox", "checkbox", "spinbutton"}:
            forms.append(f"{name}={element.value}{' checked' if element.checked else ''}")
        if role == "heading":
            headings.append(name)
        if role in {"row", "listitem"} and name:
            rows.append(name)
    for match in _HTML_HEADING.finditer(text):
        headings.append(html.unescape(_TAGS.sub("", match.group(1))))
    for match in _HTML_INPUT.finditer(text):
        attrs = _attrs(match.group(1))
        if attrs.get("type", "text") in {"hidden", "submit", "button"}:
            continue
        forms.append(f"{attrs.get('name') or attrs.get('id', '?')}={attrs.get('value', '')}")
        if "autofocus" in attrs:
            focused.append(f"input '{attrs.get('name', '')}'")
    if re.search(r"""<dialog\b[^>]*\bopen|role=["'](?:alert)?dialog["']""", text, re.IGNORECASE):
        dialogs.append("dialog (html)")
    for key, values in (
        ("focused", focused),
        ("dialog", dialogs),
        ("form_values", forms),
        ("headings", headings),
        ("rows", rows),
    ):
        if values:
            anchors[key] = _clip(values)
    return anchors


def android_anchors(observation: str) -> Anchors:
    """Screen/activity, visible texts, focused and checked elements of an Android screen."""
    anchors: Anchors = {}
    texts: list[str] = []
    focused: list[str] = []
    checked: list[str] = []
    packages: list[str] = []
    for match in _XML_NODE.finditer(observation):
        attrs = _attrs(match.group(1))
        label = attrs.get("text") or attrs.get("content-desc") or ""
        if label:
            texts.append(label)
        if attrs.get("focused") == "true":
            focused.append(label or attrs.get("resource-id", "?"))
        if attrs.get("checked") == "true" or attrs.get("selected") == "true":
            checked.append(label or attrs.get("resource-id", "?"))
        if attrs.get("package"):
            packages.append(attrs["package"])
    if not texts:
        for line in observation.splitlines():
            element = _ELEMENT_LINE.match(line)
            if not element:
                continue
            body = element.group(1)
            found = re.search(
                r"""(?:text|content[_-]desc(?:ription)?)\s*[=:]\s*['"]([^'"]+)['"]""", body
            )
            name = found.group(1) if found else body[:40]
            if found:
                texts.append(name)
            if re.search(r"focused\s*[=:]\s*true", body, re.IGNORECASE):
                focused.append(name)
            if re.search(r"checked\s*[=:]\s*true", body, re.IGNORECASE):
                checked.append(name)
    activity = re.search(
        r"(?:activity|screen)\s*[:=]\s*['\"]?([\w./$]+)", observation, re.IGNORECASE
    )
    if activity:
        anchors["screen"] = activity.group(1)
    elif packages:
        anchors["screen"] = max(set(packages), key=packages.count)
    for key, values in (("visible_texts", texts), ("focused", focused), ("checked", checked)):
        if values:
            anchors[key] = _clip(values)
    return anchors


def terminal_anchors(observation: str) -> Anchors:
    """Output lines (without prompt lines), exit status and the prompt's working directory."""
    anchors: Anchors = {}
    output: list[str] = []
    cwd = None
    for line in observation.splitlines():
        prompt = _PROMPT.match(line.strip())
        if prompt:
            cwd = prompt.group("cwd") or cwd
            continue
        if _SIMPLE_PROMPT.match(line):
            continue
        if line.strip():
            output.append(line.rstrip())
    if cwd:
        anchors["cwd"] = cwd
    status = _EXIT.findall(observation)
    if status:
        anchors["exit_status"] = status[-1]
    elif re.search(r"command not found|No such file|Error|Traceback|error:", observation):
        anchors["exit_status"] = "error"
    if output:
        anchors["output_lines"] = output[:MAX_ITEMS]
    return anchors


def os_anchors(observation: str) -> Anchors:
    """Focused element, windows/dialogs and visible texts of a desktop accessibility tree."""
    anchors: Anchors = {}
    focused, windows, texts = [], [], []
    for line in observation.splitlines():
        match = _AX_LINE.match(line) or _ARIA_LINE.match(line)
        if not match:
            cells = [c.strip() for c in line.split("\t") if c.strip()]
            if len(cells) >= 2:
                texts.append(cells[1])
                if any("focused" in c.lower() for c in cells[2:]):
                    focused.append(cells[1])
            continue
        role, name, rest = match.group(1).lower(), match.group(2), match.group(3)
        if "focused" in rest:
            focused.append(f"{role} '{name}'")
        if role in {"window", "frame", "dialog", "alert"}:
            windows.append(f"{role} '{name}'")
        if name:
            texts.append(name)
    for key, values in (("focused", focused), ("windows", windows), ("visible_texts", texts)):
        if values:
            anchors[key] = _clip(values)
    return anchors


def json_anchors(observation: str) -> Anchors:
    """Top-level keys, an error flag and the size of the first list of a JSON result."""
    from simulator.review.diffing import parse_json

    value = parse_json(observation)
    if value is None:
        first = observation.strip().splitlines()[:3]
        return {"text": first} if first else {}
    anchors: Anchors = {}
    if isinstance(value, dict):
        anchors["keys"] = sorted(str(k) for k in value)
        error = value.get("error") or value.get("isError") or value.get("is_error")
        anchors["error"] = bool(error)
        lists = [v for v in value.values() if isinstance(v, list)]
        if lists:
            anchors["result_count"] = len(lists[0])
    else:
        anchors["result_count"] = len(value)
    return anchors


EXTRACTORS: dict[str, Callable[[str], Anchors]] = {
    "web": web_anchors,
    "android": android_anchors,
    "terminal": terminal_anchors,
    "swe": terminal_anchors,
    "os": os_anchors,
    "mcp": json_anchors,
    "search": json_anchors,
}


def extract_anchors(domain: str, observation: str) -> Anchors:
    """The anchors of ``observation`` for ``domain`` (unknown domains: the JSON/text anchors)."""
    return EXTRACTORS.get(domain, json_anchors)(observation)


@dataclass(frozen=True)
class AnchorDiff:
    """One anchor on both sides; ``missing``/``extra`` list items only on one side."""

    name: str
    real: Any
    simulated: Any
    match: bool
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()

    def show(self, value: Any) -> str:
        if value is None:
            return "—"
        if isinstance(value, list):
            return ", ".join(str(v) for v in value[:8]) + (" …" if len(value) > 8 else "")
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value)

    @property
    def real_text(self) -> str:
        return self.show(self.real)

    @property
    def simulated_text(self) -> str:
        return self.show(self.simulated)


def compare_anchors(domain: str, real: str, simulated: str) -> list[AnchorDiff]:
    """One entry per anchor present on either side, in extraction order."""
    a, b = extract_anchors(domain, real), extract_anchors(domain, simulated)
    names = list(a) + [k for k in b if k not in a]
    diffs = []
    for name in names:
        left, right = a.get(name), b.get(name)
        if isinstance(left, list) or isinstance(right, list):
            ls = [json.dumps(x) if not isinstance(x, str) else x for x in (left or [])]
            rs = [json.dumps(x) if not isinstance(x, str) else x for x in (right or [])]
            missing = tuple(x for x in ls if x not in rs)
            extra = tuple(x for x in rs if x not in ls)
            diffs.append(AnchorDiff(name, left, right, not missing and not extra, missing, extra))
        else:
            diffs.append(AnchorDiff(name, left, right, left == right))
    return diffs
