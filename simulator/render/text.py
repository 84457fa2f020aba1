"""Plain text: escaped and preformatted, exactly as the agent would read it."""

from __future__ import annotations

from simulator.render._page import preformatted


def render_text(observation: str, *, title: str = "") -> str:
    """The observation as escaped preformatted text."""
    return preformatted(observation, title=title)
