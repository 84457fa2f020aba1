from __future__ import annotations

import re
from pathlib import Path

import pytest

from simulator.render import render_html
from simulator.render.web_html import start_tag, strip_navigation
from tests.unit.render.parsed import parse

PAGE = Path(__file__).parents[2] / "fixtures" / "web" / "duckduckgo_home.html"


def test_it_passes_a_real_page_through_as_a_complete_document():
    page = PAGE.read_text()
    document = render_html(page)

    # Only its two <meta http-equiv> tags (X-UA-Compatible, content-type) are gone.
    expected = page.replace('<meta http-equiv="X-UA-Compatible" content="IE=Edge" />', "").replace(
        '<meta http-equiv="content-type" content="text/html; charset=UTF-8;charset=utf-8">', ""
    )
    assert len(expected) < len(page) - 100
    assert document == expected.replace(
        "<!DOCTYPE html>", '<!DOCTYPE html>\n<meta charset="utf-8">', 1
    )
    parsed = parse(document)
    assert parsed.find("form") and parsed.find("input")
    assert parsed.find("title")[0].text == "DuckDuckGo — Privacy, simplified."


def test_it_wraps_a_fragment_in_a_document_with_the_title():
    parsed = parse(render_html("<p>Hello <b>there</b>", title="Step 3"))

    assert [e.tag for e in parsed.elements] == ["html", "head", "meta", "title", "body", "p", "b"]
    assert parsed.find("title")[0].text == "Step 3"
    assert parsed.find("p")[0].text.strip() == "Hello there"


def test_it_adds_a_doctype_and_keeps_the_page_title():
    document = render_html(
        "\ufeff<html><head><title>Own</title></head><body>x</body></html>", title="T"
    )

    assert document.startswith('<!doctype html>\n<meta charset="utf-8"><html>')
    assert [t.text for t in parse(document).find("title")] == ["Own"]


@pytest.mark.parametrize(
    "page",
    [
        '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
        "<META CONTENT='0; URL=javascript:alert(1)' x='>' HTTP-EQUIV=Refresh>",
        "<me<meta http-equiv=refresh content=1>ta http-equiv=refresh content=0>",
        "<meta/http-equiv=refresh/content=0>",
        '<meta x=a"b http-equiv=refresh content=0>',
        "<meta\thttp-equiv\n=\nrefresh content=0>",
        '<base href="https://evil.example/">',
        "<BASE\ttarget=_top/>",
        "<bas<base>e href=//evil.example>",
        "<meta content='0' http-equiv='content-security-policy'>",
        '<meta http-equiv=refresh content="<meta http-equiv=refresh>">',
    ],
)
def test_it_removes_every_meta_http_equiv_and_base_tag(page):
    document = render_html(f"<p>before</p>{page}<p>after</p>")

    assert [p.text for p in parse(document).find("p")] == ["before", "after"]
    lowered = document.lower()
    assert "<base" not in lowered and "http-equiv" not in lowered


@pytest.mark.parametrize(
    "page",
    [
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width">',
        "<meta =http-equiv content=x>",  # the attribute is named '=http-equiv'
        "<metadata http-equiv=refresh>",
        "<p>text mentioning <basement> and http-equiv</p>",
        "<meta http-equiv='refresh",  # unterminated: a browser drops it
        '<meta http-equiv="> refresh',  # the quote never closes: dropped too
    ],
)
def test_it_leaves_other_tags_alone(page):
    assert strip_navigation(page) == page


@pytest.mark.parametrize(
    ("tag", "end", "names"),
    [
        ("<meta a=1 b='>' c=\"x\">rest", 22, ["a", "b", "c"]),
        ("<meta a b=>rest", 11, ["a", "b"]),
        ("<meta a='1'b>rest", 13, ["a", "b"]),
        ("<meta / a = 1 / >rest", 17, ["a"]),
        ("<meta A=1", None, None),
    ],
)
def test_it_finds_a_start_tags_end_like_a_browser(tag, end, names):
    found = start_tag(tag, len("<meta"))

    assert found == (None if end is None else (end, names))


@pytest.mark.parametrize(
    "page",
    [
        # Each removal joins the text around it into the next tag, ten deep.
        "<me" * 10 + "<meta http-equiv=x>" + "ta http-equiv=refresh content=0>" * 10,
        # Thousands of would-be tags inside one attribute value exhaust the scanning budget.
        '<meta name="' + "<meta " * 3000 + '">' + "<meta http-equiv=refresh content=0>",
    ],
)
def test_it_makes_pathological_nesting_inert(page):
    stripped = strip_navigation(page)

    assert re.search(r"<meta(?=[\s/>])[^>]*http-equiv", stripped, re.IGNORECASE) is None
    assert not [m for m in parse(stripped).find("meta") if "http-equiv" in m.attrs]
