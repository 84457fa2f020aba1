from __future__ import annotations

import pytest

from simulator.render import render_os_a11y
from tests.unit.render.parsed import parse, style_of

# Fictional: no real desktop trees were found (see tests/fixtures/SOURCES.md).
TABLE = (
    "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)\n"
    "frame\tFiles\t\t\t\t(0, 0)\t(1920, 1080)\n"
    "push-button\tSave\t\tGtkButton\t\t(960, 540)\t(96, 32)\n"
    "label\t\tReady\t\t\t(0, 1050)\t(200, 30)\n"
    "menu\tHidden\t\t\t\t\t\n"
    "scroll-bar\tInverted\t\t\t\t(0, 0)\t(-5, 10)\n"
    "\n"
)
TREE = "frame 'Editor' (0, 0, 1280, 720)\n\n  push-button \"OK\" (640, 360, 80, 30)\n  text\n"
XML = (
    '<desktop-frame xmlns:cp="https://accessibility.ubuntu.example/ns/component">'
    '<frame name="Terminal" cp:screencoord="(0, 0)" cp:size="(800, 600)">'
    '<push-button name="Close" cp:screencoord="(780, 0)" cp:size="(20, 20)"/>'
    "<label>Hello</label><filler/></frame></desktop-frame>"
)


def test_it_places_table_rows_to_scale():
    parsed = parse(render_os_a11y(TABLE))
    boxes = parsed.find("div", "box")

    assert [box.text for box in boxes] == ["frameFiles", "push-buttonSave", "labelReady"]
    assert style_of(boxes[1]) == {
        "left": "480px",
        "top": "270px",
        "width": "48px",
        "height": "16px",
    }
    assert [item.text for item in parsed.find("li", "item")] == ["menuHidden", "scroll-barInverted"]
    assert parsed.find("div", "desktop")


def test_it_places_indented_tree_lines():
    parsed = parse(render_os_a11y(TREE))

    boxes = parsed.find("div", "box")
    assert [box.text for box in boxes] == ["frameEditor", "push-buttonOK"]
    assert style_of(boxes[1])["left"] == "480px"  # 640 of 1280, in a 960px frame
    assert [item.text for item in parsed.find("li", "item")] == ["text"]


def test_it_reads_osworld_xml_with_namespaced_coordinates():
    parsed = parse(render_os_a11y(XML))

    assert [box.text for box in parsed.find("div", "box")] == ["frameTerminal", "push-buttonClose"]
    assert [item.text for item in parsed.find("li", "item")] == ["labelHello"]


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ('<!DOCTYPE x [<!ENTITY e "e">]><desktop-frame/>', "DOCTYPE"),
        ("<desktop-frame><unclosed></desktop-frame>", "does not parse"),
        ("just words\nmore words", "no element has a position"),
    ],
)
def test_it_falls_back_to_text(text, note):
    parsed = parse(render_os_a11y(text))

    assert parsed.find("pre")[0].text == text
    assert note in parsed.find("p", "note")[0].text


def test_it_keeps_unmatched_tree_lines_as_labels():
    parsed = parse(render_os_a11y("frame 'W' (0, 0, 10, 10)\n'quoted only' tail ("))

    assert [item.text for item in parsed.find("li", "item")] == ["'quoted only' tail ("]
