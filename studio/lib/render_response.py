"""Responses that carry a rendered observation document into a sandboxed iframe.

Observations are untrusted model output. The document is served with a CSP whose
``sandbox`` directive gives it an opaque origin and no scripts, and whose
``default-src 'none'`` blocks every load except inline styles and data: images,
whatever the page's own markup asks for. This is the second wall; the first is
the ``<iframe sandbox>`` attribute (never with ``allow-same-origin``) on the page.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse

from simulator.render import render

OBSERVATION_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def sandboxed_document_response(document: str, *, status: int = 200) -> HttpResponse:
    """An HTML document served so that nothing in it can run or load anything."""
    response = HttpResponse(document, content_type="text/html; charset=utf-8", status=status)
    response["Content-Security-Policy"] = OBSERVATION_CSP
    response["X-Content-Type-Options"] = "nosniff"
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store"
    return response


def observation_response(
    domain: str, observation: str, *, fmt: str | None = None, title: str = ""
) -> HttpResponse:
    """``simulator.render.render(domain, observation)`` as a sandboxed document response."""
    return sandboxed_document_response(render(domain, observation, fmt=fmt, title=title))


def on_render_origin(path: str) -> str:
    """A render endpoint's URL, on the separate render origin when one is configured.

    With ``STUDIO_RENDER_ORIGIN`` set (see deploy/), observation documents come from
    another host name, so even a sandbox escape would land outside the studio's origin.
    """
    return f"{settings.STUDIO_RENDER_ORIGIN}{path}"
