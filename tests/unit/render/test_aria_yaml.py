from __future__ import annotations

from pathlib import Path

from simulator.render import render_aria_yaml
from simulator.render.aria_yaml import parse_aria_yaml
from tests.unit.render.parsed import parse

SNAPSHOT = Path(__file__).parents[2] / "fixtures" / "web" / "saucedemo_products.aria.yaml"


def _items() -> list[str]:
    return [line for line in SNAPSHOT.read_text().splitlines() if line.strip().startswith("- ")]


def test_it_renders_one_node_per_item_nested_as_indented():
    items = [line for line in _items() if not line.strip().startswith("- /")]
    nodes = parse(render_aria_yaml(SNAPSHOT.read_text())).find("li", "node")

    assert len(nodes) == len(items)
    depths = [sum("node" in a.classes for a in node.ancestors()) for node in nodes]
    assert depths == [(len(line) - len(line.lstrip())) // 4 for line in items]
    assert max(depths) == 3


def test_it_shows_names_refs_and_urls_styled_by_role():
    parsed = parse(render_aria_yaml(SNAPSHOT.read_text()))

    buttons = [span.text for span in parsed.find("span", "button")]
    assert buttons.count("Add to cart") == 5
    assert "Remove" in buttons
    assert "Open Menu" in buttons
    assert "Sauce Labs Backpack" in [span.text for span in parsed.find("span", "link")]
    assert "[s5e44]" in [span.text for span in parsed.find("span", "id")]
    twitter = next(
        n for n in parsed.find("li", "node") if n.children[0].text.startswith("linkTwitter")
    )
    assert "url=https://twitter.com/saucelabs" in twitter.text
    assert [n.children[0].text for n in parsed.find("li", "selected")] == [
        "optionName (A to Z)[s5e25]"
    ]


def test_it_joins_folded_continuation_lines():
    texts = [
        span.text for span in parse(render_aria_yaml(SNAPSHOT.read_text())).find("span", "text")
    ]

    assert (
        "carry.allTheThings() with the sleek, streamlined Sly Pack that melds uncompromising"
        " style with unequaled laptop and tablet protection. $29.99"
    ) in texts


def test_it_reads_quoted_keys_regex_names_attributes_and_inline_text():
    snapshot = (
        "- 'link \"a: b\"':\n"
        "  - /url: 'it''s'\n"
        '- heading "Title" [level=1]\n'
        '- checkbox "Agree" [checked]\n'
        "- paragraph: Hello\n"
        "  world\n"
        "- textbox /Search.*/\n"
        "- '\"dangling\n"
        "- 'button \"it''s\"'\n"
        r'- "link \"a\\\\b\"": tail'  # YAML-quoted key around a JSON-quoted name
        "\n"
    )
    roots = parse_aria_yaml(snapshot)

    assert [(node.role, node.name) for node in roots] == [
        ("link", "a: b"),
        ("heading", "Title"),
        ("checkbox", "Agree"),
        ("paragraph", ""),
        ("textbox", "/Search.*/"),
        ("text", "'\"dangling"),
        ("button", "it's"),
        ("link", "a\\b"),
    ]
    assert roots[0].props == [("url", "it's")]
    assert roots[3].children[0].name == "Hello world"
    parsed = parse(render_aria_yaml(snapshot))
    assert parsed.find("h1")[0].text == "Title"
    assert "checked" in parsed.find("span", "check")[0].classes


def test_it_keeps_stray_lines_as_text():
    roots = parse_aria_yaml('orphan line\n- /url: "#top"\n- ??? what\n- button "b" trailing')

    assert [(node.role, node.name) for node in roots] == [
        ("text", "orphan line"),
        ("/url", ""),
        ("text", "??? what"),
        ("text", 'button "b" trailing'),
    ]


def test_it_falls_back_to_text_when_empty():
    assert parse(render_aria_yaml("\n\n")).find("pre")
