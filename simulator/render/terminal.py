"""Terminal output as a terminal: dark screen, monospace, ANSI colours as escaped spans.

The text is replayed onto a grid of cells, so carriage returns overwrite (progress
bars end as their final state), backspaces step back and ``ESC[K`` erases.
SGR colours (16 colours, bright, 256-colour and 24-bit) become class names or
colour values computed here; every other escape or control sequence is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from simulator.render._page import esc, page

_TOKEN = re.compile(
    r"\x1b\[(?P<params>[0-?]*)[ -/]*(?P<final>[@-~])"  # CSI: colours, erase, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks (dropped)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings (dropped)
    r"|\x1b[ -/]*[0-~]?"  # any other escape
    r"|(?P<control>[\r\n\b\t])"
    r"|[\x00-\x08\x0b-\x1f\x7f]"  # other C0 controls (dropped)
)
TAB_WIDTH = 8
# The xterm palette for 256-colour indices 0-15 (CSS classes f0-f15 and k0-k15).
_BASE16 = [
    "#2e3436",
    "#cc0000",
    "#4e9a06",
    "#c4a000",
    "#3465a4",
    "#75507b",
    "#06989a",
    "#d3d7cf",
    "#555753",
    "#ef2929",
    "#8ae234",
    "#fce94f",
    "#729fcf",
    "#ad7fa8",
    "#34e2e2",
    "#eeeeec",
]

CSS = (
    "body.terminal{background:#1e1e1e;color:#d4d4d4;padding:0}"
    "pre.term{padding:12px;color:#d4d4d4}"
    ".b{font-weight:bold}.i{font-style:italic}.u{text-decoration:underline}.d{opacity:.7}"
    + "".join(
        f".f{n}{{color:{colour}}}.k{n}{{background:{colour}}}" for n, colour in enumerate(_BASE16)
    )
)


@dataclass(frozen=True)
class Style:
    """One cell's look. Colours are palette indices (0-15) or ``#rrggbb`` made here."""

    fg: int | str | None = None
    bg: int | str | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False


_PLAIN = Style()
_ATTRIBUTE_ON = {1: "bold", 2: "dim", 3: "italic", 4: "underline"}
_ATTRIBUTES_OFF = {22: ("bold", "dim"), 23: ("italic",), 24: ("underline",)}
_FLAG_CLASSES = (("bold", "b"), ("dim", "d"), ("italic", "i"), ("underline", "u"))


def _colour_256(n: int) -> int | str:
    if n < 16:
        return n
    if n < 232:
        n -= 16
        levels = [0 if v == 0 else 55 + 40 * v for v in (n // 36, n // 6 % 6, n % 6)]
        return "#{:02x}{:02x}{:02x}".format(*levels)
    grey = 8 + 10 * (n - 232)
    return f"#{grey:02x}{grey:02x}{grey:02x}"


def _extended_colour(codes: list[int], at: int) -> tuple[int | str | None, int]:
    """A ``38;5;n`` or ``38;2;r;g;b`` colour starting at ``codes[at]``, and codes consumed."""
    mode = codes[at + 1] if at + 1 < len(codes) else None
    if mode == 5 and at + 2 < len(codes):
        n = codes[at + 2]
        return (_colour_256(n) if 0 <= n <= 255 else None), 3
    if mode == 2 and at + 4 < len(codes):
        rgb = codes[at + 2 : at + 5]
        valid = all(0 <= value <= 255 for value in rgb)
        return ("#{:02x}{:02x}{:02x}".format(*rgb) if valid else None), 5
    # Malformed: treat the rest of the sequence as this code's arguments.
    return None, len(codes) - at


def _code(part: str) -> int:
    if part == "":
        return 0
    return int(part) if part.isdigit() and len(part) < 6 else -1


def apply_sgr(style: Style, params: str) -> Style:
    """The style after one ``ESC[...m``; unknown codes are ignored, as terminals do."""
    codes = [_code(part) for part in params.split(";")]
    at = 0
    while at < len(codes):
        code = codes[at]
        step = 1
        if code == 0:
            style = _PLAIN
        elif code in _ATTRIBUTE_ON:
            style = replace(style, **{_ATTRIBUTE_ON[code]: True})
        elif code in _ATTRIBUTES_OFF:
            style = replace(style, **dict.fromkeys(_ATTRIBUTES_OFF[code], False))
        elif 30 <= code <= 37 or 90 <= code <= 97:
            style = replace(style, fg=code - 30 if code < 90 else code - 82)
        elif 40 <= code <= 47 or 100 <= code <= 107:
            style = replace(style, bg=code - 40 if code < 100 else code - 92)
        elif code == 39:
            style = replace(style, fg=None)
        elif code == 49:
            style = replace(style, bg=None)
        elif code in (38, 48):
            colour, step = _extended_colour(codes, at)
            if colour is not None:
                style = replace(style, fg=colour) if code == 38 else replace(style, bg=colour)
        at += step
    return style


class _Screen:
    """Lines of (character, style) cells, written at a cursor column."""

    def __init__(self) -> None:
        self.lines: list[list[tuple[str, Style]]] = [[]]
        self.column = 0
        self.style = _PLAIN

    def write(self, text: str) -> None:
        line = self.lines[-1]
        for char in text:
            if self.column < len(line):
                line[self.column] = (char, self.style)
            else:
                line.extend([(" ", _PLAIN)] * (self.column - len(line)))
                line.append((char, self.style))
            self.column += 1

    def control(self, char: str) -> None:
        if char == "\n":
            self.lines.append([])
            self.column = 0
        elif char == "\r":
            # A lone CR returns to the line's start, so what follows overwrites it.
            self.column = 0
        elif char == "\b":
            self.column = max(self.column - 1, 0)
        else:  # tab
            self.column += TAB_WIDTH - self.column % TAB_WIDTH

    def erase(self, mode: str) -> None:
        line = self.lines[-1]
        if mode in ("", "0"):
            del line[self.column :]
        elif mode == "1":
            line[: self.column + 1] = [(" ", _PLAIN)] * min(self.column + 1, len(line))
        elif mode == "2":
            line.clear()


def replay(text: str) -> list[list[tuple[str, Style]]]:
    """``text`` replayed onto lines of (character, style) cells, escapes interpreted."""
    screen = _Screen()
    position = 0
    for match in _TOKEN.finditer(text):
        screen.write(text[position : match.start()])
        position = match.end()
        if match["control"]:
            screen.control(match["control"])
        elif match["final"] == "m":
            screen.style = apply_sgr(screen.style, match["params"])
        elif match["final"] == "K":
            screen.erase(match["params"])
    screen.write(text[position:])
    return screen.lines


def _span(style: Style, text: str) -> str:
    if style == _PLAIN:
        return esc(text)
    classes = [name for flag, name in _FLAG_CLASSES if getattr(style, flag)]
    rules = []
    for value, prefix, prop in ((style.fg, "f", "color"), (style.bg, "k", "background")):
        if isinstance(value, int):
            classes.append(f"{prefix}{value}")
        elif value is not None:
            rules.append(f"{prop}:{value}")
    class_attr = f' class="{" ".join(classes)}"' if classes else ""
    style_attr = f' style="{";".join(rules)}"' if rules else ""
    return f"<span{class_attr}{style_attr}>{esc(text)}</span>"


def _line_html(cells: list[tuple[str, Style]]) -> str:
    out = []
    start = 0
    for end in range(1, len(cells) + 1):
        if end == len(cells) or cells[end][1] != cells[start][1]:
            out.append(_span(cells[start][1], "".join(char for char, _ in cells[start:end])))
            start = end
    return "".join(out)


def render_terminal(observation: str, *, title: str = "") -> str:
    """The output on a dark monospace screen, coloured as the terminal would show it."""
    body = "\n".join(_line_html(line) for line in replay(observation))
    return page(f'<pre class="term">{body}</pre>', title=title, css=CSS, body_class="terminal")
