"""search: web_search / web_extractor as JSON tool calls or as function calls."""

from __future__ import annotations

import pytest

from simulator.domains import get_domain
from simulator.errors import InvalidAction
from simulator.world import World

SEARCH = get_domain("search")
WORLD = World(domain="search", title="Zorbland")


@pytest.mark.parametrize(
    ("raw", "kind", "args"),
    [
        ('web_search("capital of Zorbland")', "web_search", {"query": "capital of Zorbland"}),
        ("web_search(query=['a', 'b'])", "web_search", {"query": ["a", "b"]}),
        ('{"name": "web_search", "arguments": {"query": "zorb"}}', "web_search", {"query": "zorb"}),
        (
            'web_extractor("https://zorb.example/history", goal="founding year")',
            "web_extractor",
            {"url": "https://zorb.example/history", "goal": "founding year"},
        ),
        (
            'web_extractor(url="https://zorb.example")',
            "web_extractor",
            {"url": "https://zorb.example", "goal": ""},
        ),
    ],
)
def test_it_parses_search_calls(raw, kind, args):
    action = SEARCH.parse_action(raw, WORLD)

    assert (action.kind, dict(action.args)) == (kind, args)
    assert action.raw == raw


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('google("x")', "unknown tool 'google'; a search action is web_search(query)"),
        ('{"name": "browse", "arguments": {}}', "unknown tool 'browse'"),
        ('{"name": "web_search", "arguments": {}}', "web_search needs 'query'"),
        ('web_search("")', "web_search query must be non-empty text"),
        ("web_search([])", "must be non-empty text or a non-empty list"),
        ("web_search(42)", "'query' must be text or a list, got 42"),
        ('{"name": "web_extractor", "arguments": {"url": "u", "goal": 3}}', "goal must be text"),
        ("what is zorb?", "not valid Python call syntax"),
        ('web_search("a"); web_search("b")', "expected exactly one action, found 2"),
        ("web_search(q)", "must be a literal value, found `q`"),
    ],
)
def test_it_rejects_bad_search_calls(raw, message):
    with pytest.raises(InvalidAction) as caught:
        SEARCH.parse_action(raw, WORLD)

    assert message in str(caught.value)


def test_it_validates_the_corpus_type():
    assert SEARCH.validate_extras({"corpus": [{"entity": "Zorb"}]}) == []
    assert SEARCH.validate_extras({"corpus": "Zorb"}) == [
        "corpus: must be a list of entities or an object"
    ]
