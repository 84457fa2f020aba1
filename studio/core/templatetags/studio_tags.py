from __future__ import annotations

from django import template

from studio.lib.render_response import on_render_origin

register = template.Library()


@register.filter(name="on_render_origin")
def on_render_origin_filter(path: str) -> str:
    """``{{ url|on_render_origin }}``: a render URL on the configured render origin."""
    return on_render_origin(path)
