from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.render import render_terminal
from simulator.render.terminal import Style, apply_sgr
from tests.unit.render.parsed import parse, style_of

TRIPLES = sorted((Path(__file__).parents[2] / "fixtures" / "terminal_triples").glob("*.json"))
ESC = "\x1b"


def _screen(text: str):
    parsed = parse(render_terminal(text))
    (pre,) = parsed.find("pre", "term")
    return parsed, pre


@pytest.mark.parametrize("path", TRIPLES, ids=lambda p: p.stem)
def test_it_shows_real_command_output_verbatim(path):
    stdout = json.loads(path.read_text())["truth"]["stdout"]
    parsed, pre = _screen(stdout)

    assert pre.text == stdout
    assert "terminal" in parsed.find("body")[0].classes


def test_it_turns_sgr_colours_into_spans_and_escapes_text():
    _, pre = _screen(f"{ESC}[1;31merror{ESC}[0m: {ESC}[92m<ok>{ESC}[39;44mbg{ESC}[49;22m plain")

    spans = [(span.text, span.classes) for span in pre.children]
    assert spans == [("error", {"b", "f1"}), ("<ok>", {"f10"}), ("bg", {"k4"})]
    assert pre.text == "error: <ok>bg plain"


def test_it_computes_256_and_true_colours():
    _, pre = _screen(
        f"{ESC}[38;5;196ma{ESC}[38;5;244;48;5;4mb{ESC}[0;38;2;1;2;255mc{ESC}[38;5;999md"
    )

    a, b, cd = pre.children
    assert style_of(a) == {"color": "#ff0000"}
    assert style_of(b) == {"color": "#808080"} and b.classes == {"k4"}
    # An out-of-range colour is ignored, so "d" keeps "c"'s colour and shares its span.
    assert (cd.text, style_of(cd)) == ("cd", {"color": "#0102ff"})


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ("", Style()),
        ("1;;3", Style(italic=True)),
        ("2;3;4", Style(dim=True, italic=True, underline=True)),
        ("1;2;22", Style()),
        ("3;4;23;24", Style()),
        ("97;107", Style(fg=15, bg=15)),
        ("38;2;300;0;0", Style()),
        ("38;7", Style()),
        ("x;1", Style(bold=True)),
    ],
)
def test_it_applies_sgr_codes(params, expected):
    assert apply_sgr(Style(), params) == expected


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("progress 10%\rprogress 100%\n", "progress 100%\n"),
        ("line\r\nnext", "line\nnext"),
        ("long text\rshort", "shorttext"),
        (f"long text\rshort{ESC}[K", "short"),
        (f"abcdef\r{ESC}[2Kxy", "xy"),
        (f"abcdef{ESC}[3D{ESC}[1K", "      "),  # cursor moves are dropped, so 1K erases all
        ("ab\bc", "ac"),
        ("a\tb", "a       b"),
        ("\tx\r\t", "\tx".expandtabs()),
        (f"{ESC}]0;window title\x07text{ESC}]8;;http://x.example{ESC}\\link", "textlink"),
        (f"a\x00b\x07c{ESC}Pdcs{ESC}\\d{ESC}(Be", "abcde"),
    ],
)
def test_it_replays_control_sequences_like_a_terminal(raw, shown):
    _, pre = _screen(raw)

    assert pre.text == shown
