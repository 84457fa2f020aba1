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
_SPACE = "\t\n\f\r "
_DOCTYPE = re.compile(r"\A\s*<!doctype[^>]*>", re.IGNORECASE)
_HTML_TAG = re.compile(r"<html(?=[\t\n\f\r />])", re.IGNORECASE)
_TITLE_TAG = re.compile(r"<title(?=[\t\n\f\r />])", re.IGNORECASE)
_HEAD = '<meta charset="utf-8">'


def start_tag(text: str, start: int) -> tuple[int, list[str]] | None:
    """End index and attribute names of the start tag whose name ends at ``start``.

    Follows the HTML5 tokenizer's attribute states; None when the input ends inside
    the tag (a browser then drops the tag, so there is nothing to remove).
    """
    names: list[str] = []
    at = start
    length = len(text)
    while True:
        while at < length and (text[at] in _SPACE or text[at] == "/"):
            at += 1
        if at >= length:
            return None
        if text[at] == ">":
            return at + 1, names
        # Attribute name: up to space, "/", ">" or "=" (a leading "=" belongs to the name).
        name_start = at
        at += 1
        while at < length and text[at] not in _SPACE and text[at] not in "/>=":
            at += 1
        names.append(text[name_start:at].lower())
        while at < length and text[at] in _SPACE:
            at += 1
        if at >= length or text[at] != "=":
            continue
        at += 1
        while at < length and text[at] in _SPACE:
            at += 1
        if at < length and text[at] in "\"'":
            close = text.find(text[at], at + 1)
            if close < 0:
                return None
            at = close + 1
        else:
            while at < length and text[at] not in _SPACE and text[at] != ">":
                at += 1


def _strip_once(text: str) -> str:
    out = []
    position = 0
    for match in _CANDIDATE.finditer(text):
        if match.start() < position:
            continue
        tag = start_tag(text, match.end())
        if tag is None:
            continue
        end, names = tag
        if match[1].lower() == "base" or "http-equiv" in names:
            out.append(text[position : match.start()])
            position = end
    out.append(text[position:])
    return "".join(out)


def strip_navigation(page: str) -> str:
    """``page`` without any ``<meta http-equiv>`` or ``<base>`` tag, applied until stable."""
    while True:
        stripped = _strip_once(page)
        if stripped == page:
            return page
        page = stripped


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
