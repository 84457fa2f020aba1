from __future__ import annotations

from pathlib import Path

import pytest

from simulator.render import render_axtree
from simulator.render.axtree import parse_axtree
from tests.unit.render.parsed import Element, Parsed, parse

WEB = Path(__file__).parents[2] / "fixtures" / "web"
STEPS = ["webarena_shopping_step1.axtree.txt", "webarena_shopping_step2.axtree.txt"]


def _lines(name: str) -> list[str]:
    return [line for line in (WEB / name).read_text().splitlines() if line.strip()]


def _node_depth(node: Element) -> int:
    return sum(1 for ancestor in node.ancestors() if "node" in ancestor.classes)


def _line_of(parsed: Parsed, role: str, name: str) -> Element:
    """The first node whose own line (not its children) shows ``role`` and ``name``."""
    for node in parsed.find("li", "node"):
        line = node.children[0]
        roles = [part.text for part in line.children if "role" in part.classes]
        names = [part.text for part in line.children if "name" in part.classes]
        if roles == [role] and names == [name]:
            return node
    raise AssertionError(f"no {role} named {name!r}")


@pytest.mark.parametrize("name", STEPS)
def test_it_renders_one_node_per_line_nested_as_indented(name):
    lines = _lines(name)
    nodes = parse(render_axtree((WEB / name).read_text())).find("li", "node")

    assert len(nodes) == len(lines)
    expected = [len(line) - len(line.lstrip("\t")) for line in lines]
    assert [_node_depth(node) for node in nodes] == expected
    assert max(expected) >= 5


def test_it_shows_names_bids_and_roles_styled_like_their_controls():
    parsed = parse(render_axtree((WEB / STEPS[0]).read_text()))

    account = _line_of(parsed, "link", "My Account")
    assert "[227]" in account.text
    assert any({"name", "link"} <= part.classes for part in account.children[0].children)
    assert (
        "url=http://ec2-18-223-217-129.us-east-2.compute.amazonaws.com:7770/customer/account/"
        in (account.text)
    )
    newsletter = _line_of(parsed, "textbox", "Sign Up for Our Newsletter:")
    assert any("field" in part.classes for part in newsletter.children[0].children)
    assert [heading.text for heading in parsed.find("h2")] == ["One Stop Market"]
    assert "Welcome, Emma Lopez!" in parsed.text
    assert "Tony Chachere's More Spice Creole Seasoning - 14 oz" in parsed.text
    assert "\ue611 My Cart 3 3items" in parsed.text  # the repr escape is decoded


def test_it_takes_the_title_from_the_root_and_marks_focus():
    parsed = parse(render_axtree((WEB / STEPS[0]).read_text()))

    assert parsed.find("title")[0].text == "One Stop Market"
    root = parsed.find("li", "node")[0]
    assert "focused" in root.classes
    assert parse(render_axtree("[1] link 'x'", title="Mine")).find("title")[0].text == "Mine"


def test_it_marks_checked_boxes_and_leaves_unchecked_ones():
    parsed = parse(
        render_axtree("[1] checkbox 'Yes', checked='true'\n[2] checkbox 'No', checked='false'")
    )

    names = parsed.find("span", "check")
    assert [("checked" in name.classes, name.text) for name in names] == [
        (True, "Yes"),
        (False, "No"),
    ]


def test_it_reads_properties_and_keeps_unparsable_rest_visible():
    (node,) = parse_axtree("[5] textbox 'Email', value='a, b', required junk")
    (other,) = parse_axtree("[6] button 'Go' (stray)")

    assert node.props == [("value", "a, b"), ("required", ""), ("junk", "")]
    assert other.props == [("(stray)", "")]
    assert (
        parse(render_axtree("[5] textbox 'Email', value='me@x.org'")).find("span", "value")[0].text
        == "value=me@x.org"
    )


def test_it_decodes_escapes_in_names():
    (node,) = parse_axtree(r"[1] button 'It\'s \x41\u00e9\n'")

    assert node.name == "It's A\u00e9\n"


def test_it_uses_the_heading_level_when_given():
    assert parse(render_axtree("[3] heading 'Top', level=1")).find("h1")[0].text == "Top"


def test_it_falls_back_to_text_when_empty():
    parsed = parse(render_axtree("  \n"))

    assert parsed.find("pre") and parsed.find("p", "note")


def test_it_reads_lines_with_the_verifiers_grammar():
    tree = (
        "RootWebArea 'Incident', focused\n"
        "\t[a] Iframe 'Main Content'\n"
        "\t\t[a198] textbox 'Number' value='INC0010042', required\n"
        "\t\t[a260] combobox 'Urgency' value='3 - Low', hasPopup='menu', expanded=False\n"
        "\t\tStaticText 'Priority'\n"
        "\t\t[a401] generic, live='polite'\n"
    )
    root = parse_axtree(tree)[0]
    (frame,) = root.children
    number, urgency, text, generic = frame.children

    assert (frame.ident, frame.role, frame.name) == ("a", "Iframe", "Main Content")
    assert number.props == [("value", "INC0010042"), ("required", "")]
    assert urgency.props == [("value", "3 - Low"), ("hasPopup", "menu"), ("expanded", "False")]
    assert (text.ident, text.role, text.name) == ("", "StaticText", "Priority")
    assert (generic.role, generic.name, generic.props) == ("generic", "", [("live", "polite")])
    values = [span.text for span in parse(render_axtree(tree)).find("span", "value")]
    assert values == ["value=INC0010042", "value=3 - Low"]


def test_it_reads_webarena_properties_and_nests_space_indented_trees():
    (root,) = parse_axtree(
        "[1] RootWebArea 'Dashboard' focused: True\n"
        "  [1305] combobox 'Search' autocomplete: list expanded: False\n"
        "    [1306] option 'All'\n"
    )

    assert root.props == [("focused", "True")]
    (search,) = root.children
    assert search.props == [("autocomplete", "list"), ("expanded", "False")]
    assert [child.ident for child in search.children] == ["1306"]
    assert (
        "focused" in parse(render_axtree("[1] RootWebArea 'D' focused: True")).find("li")[0].classes
    )
