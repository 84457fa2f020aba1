"""Quoted strings as observation formats print them, matched and decoded in one place.

BrowserGym and WebArena print names with Python's ``repr`` (``'Emma\\'s'``,
``"it's"``, ``'\\ue611 My Cart'``); desktop trees do the same and Playwright's ARIA
snapshots use YAML double quotes. The verifiers and the renderers must agree on
where such a string ends and what it says, so both use this pattern and decoder.
The decoder reads escapes itself instead of evaluating the literal: the text is
model output.
"""

from __future__ import annotations

import re

__all__ = ["QUOTED", "unquote"]

#: A single- or double-quoted string with backslash escapes, quotes included.
QUOTED = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|.)", re.DOTALL)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _unescape_one(match: re.Match[str]) -> str:
    code = match[1]
    if len(code) > 1:
        value = int(code[1:], 16)
        return chr(value) if value <= 0x10FFFF else match[0]
    return _SIMPLE_ESCAPES.get(code, code)


def unquote(quoted: str) -> str:
    """The text of a Python-repr or YAML double-quoted string, escapes decoded."""
    return _ESCAPE.sub(_unescape_one, quoted[1:-1])
