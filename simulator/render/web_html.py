"""Web pages: passed through as the page they are, minus what could navigate the frame.

The page is shown in a sandboxed iframe under a CSP that forbids scripts and every
external load, so it is not sanitised here. Only ``<meta http-equiv>`` (a refresh
navigates without script) and ``<base>`` (it retargets every relative link) are
removed, wherever they occur. Their end is found the way an HTML5 tokenizer finds
a start tag's end (quoted values may hold ``>``), and removal repeats until none
is left, so splitting one tag around another cannot smuggle it through.
"""

from __future__ import annotations

import re

from simulator.render._page import esc

_CANDIDATE = re.compile(r"<(meta|base)(?=[\t\n\f\r />])", re.IGNORECASE)
_GAP = re.compile(r"[\t\n\f\r /]*")
_SPACES = re.compile(r"[\t\n\f\r ]*")
_NAME = re.compile(r"[^\t\n\f\r />=]*")
_UNQUOTED = re.compile(r"[^\t\n\f\r >]*")
# Nesting deeper than this many rounds of removal is an attack: remaining candidates
# are then made inert text rather than parsed again.
MAX_ROUNDS = 4
_DOCTYPE = re.compile(r"\A\s*<!doctype[^>]*>", re.IGNORECASE)
_HTML_TAG = re.compile(r"<html(?=[\t\n\f\r />])", re.IGNORECASE)
_TITLE_TAG = re.compile(r"<title(?=[\t\n\f\r />])", re.IGNORECASE)
_HEAD = '<meta charset="utf-8">'


def _run_end(pattern: re.Pattern[str], text: str, at: int, stop: int) -> int:
    """Where a run of ``pattern`` starting at ``at`` ends (``at`` itself when empty)."""
    match = pattern.match(text, at, stop)
    assert match is not None  # every run pattern also matches the empty string
    return match.end()


def start_tag(text: str, start: int, stop: int | None = None) -> tuple[int, list[str]] | None:
    """End index and attribute names of the start tag whose name ends at ``start``.

    Follows the HTML5 tokenizer's attribute states. None when no end is found before
    ``stop`` (default: the end of the text; a browser drops a tag cut off by the end).
    """
    stop = len(text) if stop is None else stop
    names: list[str] = []
    at = start
    while True:
        at = _run_end(_GAP, text, at, stop)
        if at >= stop:
            return None
        if text[at] == ">":
            return at + 1, names
        # A name runs to space, "/", ">" or "=", but a leading "=" belongs to it.
        name_end = _run_end(_NAME, text, at + 1, stop)
        names.append(text[at:name_end].lower())
        at = _run_end(_SPACES, text, name_end, stop)
        if at >= stop or text[at] != "=":
            continue
        at = _run_end(_SPACES, text, at + 1, stop)
        if at < stop and text[at] in "\"'":
            close = text.find(text[at], at + 1, stop)
            if close < 0:
                return None
            at = close + 1
        else:
            at = _run_end(_UNQUOTED, text, at, stop)


def _strip_once(text: str) -> str:
    out = []
    position = 0
    # Scanning is capped at a few times the page's length, so that thousands of
    # overlapping would-be tags cannot make this quadratic; past the cap, candidates
    # are made inert text instead of being parsed.
    budget = 8 * len(text) + 4096
    last_close = text.rfind(">")
    for match in _CANDIDATE.finditer(text):
        if match.start() < position:
            continue
        if match.end() > last_close:
            break  # no ">" is left, so no tag can end: a browser drops them all
        stop = min(len(text), match.end() + budget)
        tag = start_tag(text, match.end(), stop)
        if tag is None:
            if stop < len(text):
                out.append(text[position : match.start()] + "&lt;")
                position = match.start() + 1
            budget = max(budget - (stop - match.end()), 0)
            continue
        end, names = tag
        budget -= end - match.end()
        if match[1].lower() == "base" or "http-equiv" in names:
            out.append(text[position : match.start()])
            position = end
    out.append(text[position:])
    return "".join(out)


def strip_navigation(page: str) -> str:
    """``page`` without any ``<meta http-equiv>`` or ``<base>`` tag.

    Removal repeats until nothing changes, since removing one tag can join the text
    around it into another; after ``MAX_ROUNDS`` every remaining ``<meta``/``<base``
    is escaped to text, which can form no tag.
    """
    for _ in range(MAX_ROUNDS):
        stripped = _strip_once(page)
        if stripped == page:
            return page
        page = stripped
    return _CANDIDATE.sub(lambda match: "&lt;" + match[1], page)


def render_html(observation: str, *, title: str = "") -> str:
    """The page as a complete document: doctype and charset added, navigation tags removed."""
    page = strip_navigation(observation.lstrip("\ufeff"))
    title_html = "" if _TITLE_TAG.search(page) or not title else f"<title>{esc(title)}</title>"
    if not _HTML_TAG.search(page):
        return (
            f"<!doctype html>\n<html>\n<head>\n{_HEAD}\n{title_html}</head>\n<body>\n"
            f"{page}\n</body>\n</html>\n"
        )
    doctype = _DOCTYPE.match(page)
    if doctype:
        return f"{page[: doctype.end()]}\n{_HEAD}{title_html}{page[doctype.end() :]}"
    return f"<!doctype html>\n{_HEAD}{title_html}{page}"
