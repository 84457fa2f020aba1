"""Every renderer against every hostile observation in tests/fixtures/hostile/.

Structured renderers must show hostile text only as escaped text: no markup, attribute,
URL or CSS of the observation's making may reach their output. The HTML renderer passes
the page through (the sandbox and CSP confine it) but must remove what could navigate.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from simulator.domains.base import HTML
from simulator.render import RENDERERS
from simulator.render.web_html import strip_navigation
from tests.unit.render.parsed import parse

CORPUS = Path(__file__).parents[2] / "fixtures" / "hostile"
INDEX = json.loads((CORPUS / "index.json").read_text())
ITEMS = {entry["file"]: entry for entry in INDEX}
STRUCTURED = sorted(name for name in RENDERERS if name != HTML)

ALLOWED_TAGS = frozenset(
    [
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "div",
        "span",
        "ul",
        "ol",
        "li",
        "pre",
        "details",
        "summary",
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
    ]
)
FIXED_ATTRIBUTES = {
    ("html", "lang", "en"),
    ("meta", "charset", "utf-8"),
    ("meta", "name", "viewport"),
    ("meta", "content", "width=device-width, initial-scale=1"),
    ("details", "open", None),
}
CLASS_VALUE = re.compile(r"[a-z0-9 -]*")
STYLE_VALUE = re.compile(r"(?:[a-z-]+:(?:-?\d+(?:\.\d+)?px|#[0-9a-f]{6});?)*")
FOREIGN_MARKUP = re.compile(
    r"<\s*/?\s*(?:script|iframe|object|embed|link|base|svg|img|form|input|a|button|textarea|meta\s+http)\b",
    re.IGNORECASE,
)


def _read(name: str) -> str:
    return (CORPUS / name).read_text(encoding="utf-8")


def test_the_corpus_is_indexed_and_broad():
    files = {path.name for path in CORPUS.iterdir()} - {"index.json", "README.md"}

    assert files == set(ITEMS)
    assert len(INDEX) >= 30
    assert {entry["kind"] for entry in INDEX} == set(RENDERERS)
    assert all(entry["what_it_tries"] for entry in INDEX)


@pytest.mark.parametrize("fmt", STRUCTURED)
@pytest.mark.parametrize("name", sorted(ITEMS))
def test_structured_renderers_only_ever_show_hostile_text_as_text(fmt, name):
    document = RENDERERS[fmt](_read(name), title=name)
    parsed = parse(document)

    assert FOREIGN_MARKUP.search(document) is None
    assert {element.tag for element in parsed.elements} <= ALLOWED_TAGS
    for tag, attribute, value in parsed.attributes:
        if attribute == "class":
            assert CLASS_VALUE.fullmatch(value or ""), (tag, value)
        elif attribute == "style":
            assert STYLE_VALUE.fullmatch(value or ""), (tag, value)
        else:
            assert (tag, attribute, value) in FIXED_ATTRIBUTES
    for style in parsed.find("style"):
        css = style.text.lower()
        assert "url(" not in css and "@import" not in css and "</" not in css and "<" not in css


@pytest.mark.parametrize("name", sorted(ITEMS))
def test_each_renderer_shows_what_its_kind_must_show(name):
    entry = ITEMS[name]
    parsed = parse(RENDERERS[entry["kind"]](_read(name)))

    for text in entry.get("shows", []):
        assert text in parsed.text


@pytest.mark.parametrize("name", sorted(ITEMS))
def test_the_html_renderer_removes_navigation_and_keeps_the_rest(name):
    observation = _read(name)
    document = RENDERERS[HTML](observation)
    parsed = parse(document)

    assert not parsed.find("base")
    assert not [meta for meta in parsed.find("meta") if "http-equiv" in meta.attrs]
    assert re.search(r"<base[\s/>]", document, re.IGNORECASE) is None
    assert re.search(r"<meta[^<]*http-equiv", document, re.IGNORECASE) is None
    kept = re.sub(r"\A<!doctype[^>]*>", "", strip_navigation(observation), flags=re.IGNORECASE)
    assert kept in document


def test_the_html_renderer_does_not_sanitise_beyond_navigation():
    document = RENDERERS[HTML](_read("script_tag.html"))

    assert "<script>document.body.innerHTML='pwned'" in document
