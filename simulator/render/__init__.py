"""Observation renderers: untrusted world-model output -> a self-contained HTML document.

Each renderer is a pure function ``render_<format>(observation, *, title="") -> str``.
The studio serves the result in a sandboxed iframe under a CSP that blocks script
and every external load; the renderers are a second line of defence: structured
formats escape every text they take from the observation and never emit script,
event handlers, ``javascript:`` or external URLs themselves. Only ``render_html``
passes a page through (it *is* the page), minus tags that could navigate the frame.
"""

from __future__ import annotations

from collections.abc import Callable

from simulator.domains import domain_names, get_domain
from simulator.domains.base import (
    ANDROID_ELEMENTS,
    ARIA_YAML,
    AXTREE,
    HTML,
    JSON,
    OS_A11Y,
    TERMINAL,
    TEXT,
    UIAUTOMATOR_XML,
)
from simulator.render.android_elements import render_android_elements
from simulator.render.aria_yaml import render_aria_yaml
from simulator.render.axtree import render_axtree
from simulator.render.json_tree import render_json
from simulator.render.os_a11y import render_os_a11y
from simulator.render.terminal import render_terminal
from simulator.render.text import render_text
from simulator.render.uiautomator import render_uiautomator_xml
from simulator.render.web_html import render_html

Renderer = Callable[..., str]

#: Format name -> renderer; every format of :mod:`simulator.domains.base` has one.
RENDERERS: dict[str, Renderer] = {
    HTML: render_html,
    AXTREE: render_axtree,
    ARIA_YAML: render_aria_yaml,
    OS_A11Y: render_os_a11y,
    UIAUTOMATOR_XML: render_uiautomator_xml,
    ANDROID_ELEMENTS: render_android_elements,
    JSON: render_json,
    TERMINAL: render_terminal,
    TEXT: render_text,
}


def render(domain: str, observation: str, *, fmt: str | None = None, title: str = "") -> str:
    """The HTML document showing ``observation`` of ``domain``.

    ``fmt`` forces a format; otherwise it is detected among the domain's formats,
    and the domain's default renderer is used when none fits. Raises ValueError for
    an unknown domain or format.
    """
    try:
        spec = get_domain(domain)
    except KeyError:
        known = ", ".join(domain_names())
        raise ValueError(f"unknown domain {domain!r} (known: {known})") from None
    chosen = fmt or spec.detect_format(observation) or spec.renderer
    if chosen not in RENDERERS:
        raise ValueError(f"unknown format {chosen!r} (known: {', '.join(RENDERERS)})")
    return RENDERERS[chosen](observation, title=title)


__all__ = [
    "RENDERERS",
    "render",
    "render_android_elements",
    "render_aria_yaml",
    "render_axtree",
    "render_html",
    "render_json",
    "render_os_a11y",
    "render_terminal",
    "render_text",
    "render_uiautomator_xml",
]
