"""simulator.observations: format detection and the small parsers behind the verifiers."""

from __future__ import annotations

import pytest

from simulator import observations
from simulator.domains import get_domain
from simulator.verifiers import verify_format
from tests.unit.verifiers._fixtures import OBSERVATION_FILES, read

OS_TABLE = (
    "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)\n"
    "push-button\tSave\t\t\t\t(1700, 40)\t(80, 32)\n"
    "label\tInvoice 7\tInvoice 7\t\t\t(20, 90)\t(300, 20)\n"
)
OS_TREE = (
    "desktop-frame 'Desktop' (0, 0, 1920, 1080)\n"
    "  frame 'Ledger - Quillpad' (0, 0, 1920, 1080)\n"
    "    push-button 'Save' (1700, 40, 80, 32)\n"
)
OS_XML = '<desktop-frame name="Desktop"><frame name="Ledger"/></desktop-frame>'
ELEMENTS = (
    'UI element 0: {"index": 0, "text": "Inbox", "bbox_pixels": {"x_min": 0}}\n'
    "UI element 1: UIElement(text='Compose', is_clickable=True)\n"
)


@pytest.mark.parametrize(("domain", "relative", "expected"), OBSERVATION_FILES)
def test_it_detects_fixture_formats_without_candidates(domain, relative, expected):
    assert observations.detect_format(read(relative)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (OS_TABLE, "os-a11y"),
        (OS_TREE, "os-a11y"),
        (OS_XML, "os-a11y"),
        (ELEMENTS, "android-elements"),
        ('{"ok": true}', "json"),
        ("[1, 2]", "json"),
        ("root@host:/app# ls\nmain.py\nroot@host:/app# ", "terminal"),
        ("<div><p>hi</div>", "html"),
        ("# Results\n1. [Zorb](https://zorb.example)", "text"),
        ("", "text"),
    ],
)
def test_it_detects_each_format(text, expected):
    assert observations.detect_format(text) == expected


def test_it_returns_none_when_no_candidate_fits_and_falls_back_to_terminal():
    assert observations.detect_format("plain words", ["html", "axtree"]) is None
    assert observations.detect_format("plain words", ["terminal"]) == "terminal"
    assert observations.detect_format("", ["html"]) is None


def test_os_observations_pass_and_broken_ones_say_why():
    for text in (OS_TABLE, OS_TREE, OS_XML):
        assert get_domain("os").detect_format(text) == "os-a11y"
        assert all(r.passed for r in verify_format("os", text))
    ragged = OS_TABLE + "button\tOnly two\n"
    off_tree = OS_TREE + "    push-button 'Close' (1, 2, 3, 4)\n    oops\n"
    broken_xml = OS_XML[:-5]

    reasons = {
        text: {r.name: r.reason for r in verify_format("os", text) if not r.passed}
        for text in (ragged, off_tree, broken_xml)
    }

    assert "has 2 columns, expected 7" in reasons[ragged]["a11y_tree"]
    assert "is not a `role 'name' (x, y, w, h)` node" in reasons[off_tree]["a11y_tree"]
    assert "XML does not parse" in reasons[broken_xml]["a11y_tree"]


def test_it_parses_the_os_table_rows():
    rows = observations.os_a11y_table_rows(OS_TABLE)

    assert rows[0]["name"] == "Save"
    assert rows[1]["position (top-left x&y)"] == "(20, 90)"
    with pytest.raises(ValueError, match="header"):
        observations.os_a11y_table_rows("name\tvalue\n")


def test_it_reads_axtree_nodes_with_depth_bid_role_and_name():
    nodes = observations.axtree_lines(read("web/webarena_shopping_step1.axtree.txt"))

    assert nodes[0].role == "RootWebArea"
    assert nodes[0].name == "One Stop Market"
    link = next(node for node in nodes if node.bid == "227")
    assert (link.depth, link.role, link.name) == (4, "link", "My Account")
    assert any(node.name == "Tony Chachere's More Spice Creole Seasoning - 14 oz" for node in nodes)


def test_it_parses_uiautomator_nodes_in_document_order():
    nodes = observations.parse_uiautomator(read("android/uiautomator_youtube_home.xml"))

    assert nodes[0]["class"] == "android.widget.FrameLayout"
    assert nodes[0]["bounds"] == "[0,0][1344,2992]"
    assert len(nodes) == 63


def test_it_refuses_xml_with_entity_declarations():
    bomb = '<?xml version="1.0"?><!DOCTYPE h [<!ENTITY a "aaaa">]><hierarchy>&a;</hierarchy>'

    with pytest.raises(ValueError, match="DOCTYPE/ENTITY"):
        observations.parse_uiautomator(bomb)
    with pytest.raises(ValueError, match="expected <hierarchy>"):
        observations.parse_uiautomator("<screen/>")


def test_it_reports_misnumbered_android_elements():
    problems = observations.android_elements_problems(
        "UI element 0: {}\nUI element 2: {}\nnot an element\nUI element 3: {}"
    )

    assert problems == [
        "line 2 is element 2, expected 1",
        "line 3 is not a `UI element N: ...` entry",
    ]
    assert observations.android_element_indices(ELEMENTS) == [0, 1]


def test_it_reports_aria_problems():
    assert observations.aria_yaml_problems("") == ["the snapshot is empty"]
    assert "does not start an ARIA item" in observations.aria_yaml_problems("hello")[0]
    deep = "- list [ref=e1]:\n          - listitem [ref=e2]"
    assert "indented deeper than its parent" in observations.aria_yaml_problems(deep)[0]
    assert observations.aria_refs(read("web/saucedemo_products.aria.yaml")) >= {"s5e44", "s5e12"}


def test_it_recognises_shell_prompts():
    assert observations.ends_with_prompt("root@host:/app# pwd\n/app\nroot@host:/app# ")
    assert observations.ends_with_prompt("output\n$ ")
    assert observations.ends_with_prompt("(venv) ana@lab:~/src$")
    assert not observations.ends_with_prompt("root@host:/app# sleep 10")
    assert not observations.ends_with_prompt("")
    assert observations.has_prompt_line("bash-5.1$ ls")
    assert not observations.has_prompt_line("# a comment in a script")


def test_is_json_accepts_any_json_value_but_not_blank_text():
    assert observations.is_json("255.0")
    assert observations.is_json('"text"')
    assert not observations.is_json("")
    assert not observations.is_json("{'single': 'quotes'}")
