"""Recognising observation formats, and the small parsers the checks need.

World-model output is untrusted text, so every function here only reads it:
nothing is evaluated, XML with a DOCTYPE or entity declarations is refused
before parsing, and malformed input yields ``None``/``False``/``ValueError``
rather than a crash. The format names are those of :mod:`simulator.domains.base`.

What each format looks like:

- ``html``: a document or fragment (``<!DOCTYPE html>``, ``<html>``, ``<body>``, ``<div>`` ...).
- ``axtree``: BrowserGym's (or WebArena's) accessibility tree, one node a line,
  tab-indented: ``[227] link 'My Account', url='...'``; text nodes carry no bid
  (``StaticText 'Hi'``). Its grammar is in :mod:`simulator.axtree`.
- ``aria-yaml``: a Playwright ARIA snapshot: ``- button "Add to cart" [ref=s5e44]``.
- ``os-a11y``: a desktop accessibility tree, as OSWorld's tab-separated table
  (header ``tag\\tname\\ttext\\tclass\\tdescription\\tposition (top-left x&y)\\tsize (w&h)``),
  as an indented tree of ``role 'name' (x, y, w, h)`` lines, or as OSWorld's raw
  XML (root ``<desktop-frame>``).
- ``uiautomator-xml``: ``uiautomator dump`` output, root ``<hierarchy rotation="0">``.
- ``android-elements``: AndroidWorld's numbered list, ``UI element 0: {...}`` or
  ``UI element 0: UIElement(...)``.
- ``json``: any JSON value.
- ``terminal``: a terminal screen; with prompt lines (``user@host:/dir$ cmd``) when
  it is a screen capture, or bare command output.
- ``text``: anything else.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from html.parser import HTMLParser

from simulator.axtree import axtree_lines, axtree_problems
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
from simulator.quoting import QUOTED

__all__ = [
    "android_element_indices",
    "android_elements_problems",
    "aria_refs",
    "aria_yaml_problems",
    "axtree_lines",
    "axtree_problems",
    "detect_format",
    "ends_with_prompt",
    "has_prompt_line",
    "html_bids",
    "html_problems",
    "is_json",
    "os_a11y_problems",
    "os_a11y_table_rows",
    "parse_uiautomator",
]

# --- terminal -------------------------------------------------------------------------

# A shell prompt line: ``user@host:/path$``, ``root@host:~#``, ``(venv) user@host:~/x$``
# or ``bash-5.1$``, optionally followed by the command typed at it.
_PROMPT = re.compile(
    r"^(?:\([^)\n]*\) )?"
    r"(?:[\w.-]+@[\w.-]+(?::[^\n$#]*)?\s?[$#%>]|[\w.-]+-\d+(?:\.\d+)*[$#])"
    r"(?: .*)?$"
)
# A bare ``$``, ``#`` or ``>`` also counts as the final prompt, but not as evidence of
# prompts elsewhere: ``# comment`` lines are common in command output.
_BARE_PROMPT = re.compile(r"^[$#>]$")


def has_prompt_line(text: str) -> bool:
    """Whether any line of ``text`` starts with a ``user@host`` style shell prompt."""
    return any(_PROMPT.match(line.rstrip()) for line in text.splitlines())


def ends_with_prompt(text: str) -> bool:
    """Whether the last non-blank line is a shell prompt with nothing typed after it."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    last = lines[-1].strip()
    return bool(_BARE_PROMPT.match(last)) or (bool(_PROMPT.match(last)) and last[-1] in "$#%>")


# --- json -----------------------------------------------------------------------------


def is_json(text: str) -> bool:
    """Whether ``text`` is one JSON value (object, array, string, number, literal)."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return bool(text.strip())


# --- Playwright ARIA snapshot ---------------------------------------------------------

_ARIA_ITEM = re.compile(r"^(?P<indent>(?:  )*)- (?P<body>\S.*)$")
_ARIA_FIRST = re.compile(
    rf"^- (?:[a-z][a-z-]*(?: (?:{QUOTED}))?(?: \[[^\]]+\])*:?(?: .*)?|/\w+:.*)$"
)
_ARIA_REF = re.compile(r"\[ref=([\w-]+)\]")


def aria_refs(text: str) -> set[str]:
    """The ``[ref=...]`` ids of a Playwright ARIA snapshot."""
    return set(_ARIA_REF.findall(text))


def aria_yaml_problems(text: str) -> list[str]:
    """Why ``text`` is not a Playwright ARIA snapshot (empty list when it is).

    Every line is a ``- item`` at an even indent no deeper than one level below the
    previous item, or a continuation line indented deeper than its item.
    """
    lines = [(i, line.rstrip("\r")) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        return ["the snapshot is empty"]
    if not _ARIA_FIRST.match(lines[0][1]):
        return [f'line {lines[0][0]} does not start an ARIA item (`- role "name" [ref=...]`)']
    problems = []
    item_indent = 0
    for number, line in lines:
        match = _ARIA_ITEM.match(line)
        indent = len(line) - len(line.lstrip(" "))
        if match:
            if indent > item_indent + 4:
                problems.append(f"line {number} is indented deeper than its parent item")
            item_indent = indent
        elif indent <= item_indent:
            problems.append(f"line {number} is neither an item (`- ...`) nor a continuation")
    return problems[:5]


# --- HTML -----------------------------------------------------------------------------

# Elements whose end tag may be omitted (or that have none): not checked for closure.
_OPTIONAL_END = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "colgroup",
        "dd",
        "dt",
        "embed",
        "hr",
        "img",
        "input",
        "li",
        "link",
        "meta",
        "option",
        "optgroup",
        "p",
        "param",
        "rp",
        "rt",
        "source",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "track",
        "wbr",
    ]
)
_HTML_START = re.compile(
    r"<(?:!doctype\s+html|html|head|body|div|span|p|a|form|table|ul|ol|section|main|nav|"
    r"header|footer|article|button|input|h[1-6]|script|style|meta|link|title|img|label)\b",
    re.IGNORECASE,
)
_BID_ATTRS = ("bid", "browsergym_id", "data-bid")


class _TagChecker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, int]] = []
        self.problems: list[str] = []
        self.bids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in _BID_ATTRS and value:
                self.bids.add(value)
        if tag not in _OPTIONAL_END:
            self.stack.append((tag, self.getpos()[0]))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in _BID_ATTRS and value:
                self.bids.add(value)

    def handle_endtag(self, tag: str) -> None:
        if tag in _OPTIONAL_END:
            return
        line = self.getpos()[0]
        open_tags = [name for name, _ in self.stack]
        if tag not in open_tags:
            self.problems.append(f"stray </{tag}> at line {line}")
            return
        while self.stack:
            name, opened = self.stack.pop()
            if name == tag:
                return
            self.problems.append(f"<{name}> opened at line {opened} is not closed before </{tag}>")


def _check_html(text: str) -> _TagChecker:
    checker = _TagChecker()
    checker.feed(text)
    checker.close()
    return checker


def html_problems(text: str) -> list[str]:
    """Unclosed or stray tags in an HTML document (optional end tags are allowed)."""
    checker = _check_html(text)
    problems = checker.problems + [
        f"<{name}> opened at line {line} is never closed" for name, line in checker.stack
    ]
    return problems[:5]


def html_bids(text: str) -> set[str]:
    """The BrowserGym element ids (``bid`` attributes) present in an HTML document."""
    return _check_html(text).bids


# --- XML (uiautomator, desktop trees) -------------------------------------------------

_XML_DECLARATIONS = re.compile(r"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def _parse_xml(text: str) -> ET.Element:
    if _XML_DECLARATIONS.search(text):
        raise ValueError("DOCTYPE/ENTITY declarations are not allowed in observations")
    try:
        return ET.fromstring(text.strip())
    except ET.ParseError as error:
        raise ValueError(f"XML does not parse: {error}") from None


def _xml_problems(text: str) -> list[str]:
    """Why ``text`` is not well-formed XML (empty list when it is)."""
    try:
        _parse_xml(text)
    except ValueError as error:
        return [str(error)]
    return []


def parse_uiautomator(text: str) -> list[dict[str, str]]:
    """Every ``<node>`` of a uiautomator dump in document order, as attribute dicts.

    Raises ValueError when the text does not parse or its root is not ``<hierarchy>``.
    The position of a node in this list is the element index android actions use.
    """
    root = _parse_xml(text)
    if root.tag != "hierarchy":
        raise ValueError(f"root element is <{root.tag}>, expected <hierarchy>")
    return [dict(node.attrib) for node in root.iter("node")]


# --- AndroidWorld element list --------------------------------------------------------

_ANDROID_ELEMENT = re.compile(r"^UI element (\d+):\s*(\S.*)$")


def android_element_indices(text: str) -> list[int]:
    """The numbers of an AndroidWorld ``UI element N: ...`` list, in order."""
    indices = []
    for line in text.splitlines():
        match = _ANDROID_ELEMENT.match(line.strip())
        if match:
            indices.append(int(match[1]))
    return indices


def android_elements_problems(text: str) -> list[str]:
    """Why ``text`` is not a well-formed ``UI element N:`` list numbered 0, 1, 2, ..."""
    problems = []
    expected = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = _ANDROID_ELEMENT.match(line.strip())
        if not match:
            problems.append(f"line {number} is not a `UI element N: ...` entry")
        elif int(match[1]) != expected:
            problems.append(f"line {number} is element {match[1]}, expected {expected}")
            expected = int(match[1]) + 1
        else:
            expected += 1
    return problems[:5]


def _is_android_elements(text: str) -> bool:
    return bool(_ANDROID_ELEMENT.match(text.strip().splitlines()[0]))


# --- desktop accessibility tree -------------------------------------------------------

OS_TABLE_HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
_OS_TREE_LINE = re.compile(
    rf"^(?P<indent>\s*)(?P<role>[a-z][a-z0-9 _-]*?)(?: (?P<name>{QUOTED}))? "
    r"\((?P<x>-?\d+), (?P<y>-?\d+), (?P<w>\d+), (?P<h>\d+)\)$"
)


def os_a11y_table_rows(text: str) -> list[dict[str, str]]:
    """Rows of an OSWorld-style tab-separated accessibility table, keyed by header.

    Raises ValueError when the header is missing or a row has the wrong column count.
    """
    lines = [line.rstrip("\r") for line in text.strip("\n").splitlines()]
    if not lines or lines[0].strip() != OS_TABLE_HEADER:
        raise ValueError("the table does not start with the accessibility-table header")
    columns = OS_TABLE_HEADER.split("\t")
    rows = []
    for number, line in enumerate(lines[1:], 2):
        cells = line.split("\t")
        if len(cells) != len(columns):
            raise ValueError(f"line {number} has {len(cells)} columns, expected {len(columns)}")
        rows.append(dict(zip(columns, cells, strict=True)))
    return rows


def os_a11y_problems(text: str) -> list[str]:
    """Why ``text`` is not a well-formed desktop accessibility table, tree or XML."""
    stripped = text.strip()
    if stripped.startswith("<"):
        return _xml_problems(stripped)
    if stripped.startswith(OS_TABLE_HEADER):
        try:
            os_a11y_table_rows(stripped)
        except ValueError as error:
            return [str(error)]
        return []
    return [
        f"line {number} is not a `role 'name' (x, y, w, h)` node: {line.strip()[:60]!r}"
        for number, line in enumerate(stripped.splitlines(), 1)
        if line.strip() and not _OS_TREE_LINE.match(line.rstrip())
    ][:5]


def _is_os_a11y(text: str) -> bool:
    stripped = text.strip()
    if stripped.startswith(OS_TABLE_HEADER):
        return True
    if stripped.startswith("<"):
        return bool(re.match(r"(?:<\?xml[^>]*\?>\s*)?<desktop-frame\b", stripped))
    lines = [line for line in stripped.splitlines() if line.strip()]
    matching = sum(1 for line in lines if _OS_TREE_LINE.match(line.rstrip()))
    return bool(_OS_TREE_LINE.match(lines[0].rstrip())) and matching >= 0.8 * len(lines)


# --- detection ------------------------------------------------------------------------


def _is_uiautomator(text: str) -> bool:
    head = text.lstrip()[:300]
    return "<hierarchy" in head and head.startswith(("<?xml", "<hierarchy"))


def _is_html(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith("<") and bool(_HTML_START.search(stripped[:2000]))


def _is_axtree(text: str) -> bool:
    # Loose on purpose: a tree whose bids were lost is still recognised, so that
    # axtree_problems can say what is wrong with it.
    nodes = axtree_lines(text)
    lines = [line for line in text.splitlines() if line.strip()]
    if not nodes or len(nodes) < 0.8 * len(lines):
        return False
    return nodes[0].role == "RootWebArea" or any(node.bid for node in nodes)


def _is_aria_yaml(text: str) -> bool:
    first = text.strip().splitlines()[0]
    return bool(_ARIA_FIRST.match(first)) and ("[ref=" in text or len(text.splitlines()) > 1)


# Most specific first: a uiautomator dump is XML, a desktop tree may be XML.
_DETECTORS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    (UIAUTOMATOR_XML, _is_uiautomator),
    (OS_A11Y, _is_os_a11y),
    (ANDROID_ELEMENTS, _is_android_elements),
    (JSON, is_json),
    (HTML, _is_html),
    (AXTREE, _is_axtree),
    (ARIA_YAML, _is_aria_yaml),
    (TERMINAL, has_prompt_line),
)


def detect_format(text: str, candidates: Sequence[str] | None = None) -> str | None:
    """The format ``text`` is in, among ``candidates`` (all formats when None).

    Recognition is structural and cheap; it says which parser applies, not that the
    text is well-formed (the verifiers judge that). Truncated HTML is still ``html``.
    When nothing specific fits, any text is ``text`` if that is a candidate, else
    ``terminal`` if that is (bare command output is what a terminal shows); else None.
    """
    allowed = set(candidates) if candidates is not None else None
    for name, detector in _DETECTORS:
        if (allowed is None or name in allowed) and text.strip() and detector(text):
            return name
    if allowed is None or TEXT in allowed:
        return TEXT
    if TERMINAL in allowed:
        return TERMINAL
    return None
