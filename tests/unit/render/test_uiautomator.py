from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from simulator.render import render_uiautomator_xml
from simulator.render._xml import parse_xml
from tests.unit.render.parsed import parse, style_of

DUMP = Path(__file__).parents[2] / "fixtures" / "android" / "uiautomator_youtube_home.xml"


def _shown_nodes(xml_text: str) -> list[dict[str, str]]:
    return [
        node.attrib
        for node in ET.fromstring(xml_text).iter("node")
        if node.get("text", "").strip() or node.get("content-desc", "").strip()
    ]


def _corners(bounds: str) -> list[int]:
    return [int(n) for n in re.findall(r"-?\d+", bounds)]


def test_it_draws_one_box_per_node_with_text_at_its_bounds_to_scale():
    text = DUMP.read_text()
    nodes = _shown_nodes(text)
    parsed = parse(render_uiautomator_xml(text))
    boxes = parsed.find("div", "box")

    assert len(boxes) == len(nodes) >= 15
    scale = 360 / 1344  # the dump's root bounds are [0,0][1344,2992]; the phone frame is 360px
    for node, box in zip(nodes, boxes, strict=True):
        x1, y1, x2, y2 = _corners(node["bounds"])
        style = style_of(box)
        assert float(style["left"].removesuffix("px")) == pytest.approx(x1 * scale, abs=0.051)
        assert float(style["top"].removesuffix("px")) == pytest.approx(y1 * scale, abs=0.051)
        assert float(style["width"].removesuffix("px")) == pytest.approx(
            (x2 - x1) * scale, abs=0.051
        )
        assert (node.get("text") or node["content-desc"]) in box.text
    screen = parsed.find("div", "screen")[0]
    assert style_of(screen) == {"width": "360px", "height": "762.9px"}


def test_it_shows_the_visible_texts_and_states():
    parsed = parse(render_uiautomator_xml(DUMP.read_text()))
    labels = [span.text for span in parsed.find("span", "label")]

    for expected in ("Latest videos", "Search YouTube", "Search with your voice", "Subscriptions"):
        assert expected in labels
    home = [box for box in parsed.find("div", "box") if "Home" in box.text]
    assert {"clickable", "selected"} <= home[0].classes
    assert parsed.find("div", "phone")


def test_it_shows_a_description_beside_a_different_text():
    xml = (
        '<hierarchy rotation="0"><node text="Play" content-desc="Play video" class="a.Button" '
        'enabled="false" focused="true" bounds="[0,0][100,50]"/>'
        '<node text="Lost" bounds="nowhere"/><node text="Inverted" bounds="[9,9][0,0]"/></hierarchy>'
    )
    parsed = parse(render_uiautomator_xml(xml))

    (box,) = parsed.find("div", "box")
    assert [s.text for s in box.children] == ["Button", "Play", "Play video"]
    assert {"disabled", "focused"} <= box.classes
    assert [item.text for item in parsed.find("li", "item")] == ["Lost", "Inverted"]


def test_it_reads_node_tags_one_by_one_when_the_dump_is_cut_short():
    text = DUMP.read_text()
    cut = text[: text.index("Subscriptions")]
    parsed = parse(render_uiautomator_xml(cut))

    labels = [span.text for span in parsed.find("span", "label")]
    assert "Latest videos" in labels and "Subscriptions" not in labels
    assert "read one by one" in parsed.find("p", "note")[0].text


@pytest.mark.parametrize(
    "xml",
    [
        '<!DOCTYPE h [<!ENTITY x SYSTEM "file:///etc/passwd">]><hierarchy><node text="&x;" '
        'bounds="[0,0][1,1]"/></hierarchy>',
        '<hierarchy><!ENTITY x "y"><node text="a" bounds="[0,0][1,1]"/></hierarchy>',
    ],
)
def test_it_never_parses_declarations(xml):
    parsed = parse(render_uiautomator_xml(xml))

    assert not parsed.find("div", "box")
    assert parsed.find("pre")[0].text == xml
    assert "DOCTYPE" in parsed.find("p", "note")[0].text


def test_it_shows_text_when_no_node_has_text():
    parsed = parse(
        render_uiautomator_xml('<hierarchy><node text="" bounds="[0,0][1,1]"/></hierarchy>')
    )

    assert "no node shows any text" in parsed.find("p", "note")[0].text


def test_it_hands_element_lists_to_the_element_renderer():
    parsed = parse(render_uiautomator_xml('UI element 0: {"index": 0, "text": "OK"}'))

    assert [item.text for item in parsed.find("li", "item")] == ["#0OK"]


def test_parse_xml_itself_refuses_declarations():
    with pytest.raises(ValueError, match="DOCTYPE"):
        parse_xml('<!DOCTYPE a [<!ENTITY b "c">]><a>&b;</a>')
