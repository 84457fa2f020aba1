from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.domains import base, domain_names
from simulator.render import (
    RENDERERS,
    render,
    render_android_elements,
    render_aria_yaml,
    render_axtree,
    render_html,
    render_json,
    render_os_a11y,
    render_terminal,
    render_text,
    render_uiautomator_xml,
)

FIXTURES = Path(__file__).parents[2] / "fixtures"
FORMATS = {
    base.HTML, base.AXTREE, base.ARIA_YAML, base.OS_A11Y, base.UIAUTOMATOR_XML,
    base.ANDROID_ELEMENTS, base.JSON, base.TERMINAL, base.TEXT,
}  # fmt: skip


def test_every_format_has_a_renderer():
    assert set(RENDERERS) == FORMATS


@pytest.mark.parametrize(
    ("domain", "path", "renderer"),
    [
        ("web", "web/webarena_shopping_step1.axtree.txt", render_axtree),
        ("web", "web/saucedemo_products.aria.yaml", render_aria_yaml),
        ("web", "web/duckduckgo_home.html", render_html),
        ("android", "android/uiautomator_youtube_home.xml", render_uiautomator_xml),
    ],
)
def test_it_picks_the_renderer_of_the_detected_format(domain, path, renderer):
    observation = (FIXTURES / path).read_text()

    assert render(domain, observation, title="t") == renderer(observation, title="t")


@pytest.mark.parametrize(
    ("domain", "observation", "renderer"),
    [
        ("mcp", '{"ok": true}', render_json),
        ("mcp", "Error: payment amount does not add up", render_text),
        ("search", '[{"title": "x"}]', render_json),
        ("search", "1. Result", render_text),
        ("terminal", "\x1b[31mred\x1b[0m", render_terminal),
        ("swe", "$ ls\nREADME.md", render_terminal),
        ("web", "plain words", render_html),
        (
            "os",
            "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)\n",
            render_os_a11y,
        ),
        ("os", "nothing structured", render_os_a11y),
        ("android", 'UI element 0: {"index": 0, "text": "OK"}', render_android_elements),
        ("android", json.dumps([{"text": "OK", "bounds": "[0,0][9,9]"}]), render_uiautomator_xml),
    ],
)
def test_it_falls_back_to_the_domains_renderer(domain, observation, renderer):
    assert render(domain, observation) == renderer(observation)


def test_a_json_element_array_reaches_the_element_renderer_on_android():
    document = render("android", json.dumps([{"text": "OK", "bounds": "[0,0][9,9]"}]))

    assert document == render_android_elements(json.dumps([{"text": "OK", "bounds": "[0,0][9,9]"}]))


def test_a_forced_format_skips_detection():
    assert render("web", "[1] link 'x'", fmt="text") == render_text("[1] link 'x'")


def test_it_renders_every_domain():
    for domain in domain_names():
        assert render(domain, "hello").startswith(("<!doctype html>", "<!DOCTYPE html>"))


@pytest.mark.parametrize(
    ("domain", "fmt", "message"),
    [("nope", None, "unknown domain"), ("web", "pdf", "unknown format")],
)
def test_it_rejects_unknown_domains_and_formats(domain, fmt, message):
    with pytest.raises(ValueError, match=message):
        render(domain, "x", fmt=fmt)


def test_simulator_render_does_not_import_django():
    import subprocess
    import sys

    code = "import sys, simulator.render; print('django' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
