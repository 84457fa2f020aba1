"""The HTML document every structured renderer returns, and the one escape they all use.

Observation text only ever reaches a document through :func:`esc`, and only as
element text: attribute values are built from the renderer's own vocabulary
(class names, numbers), so a hostile observation has no attribute to break out of.
"""

from __future__ import annotations

import html

BASE_CSS = """
*{box-sizing:border-box}
body{margin:0;padding:12px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;
color:#1f2328;background:#fff}
pre{margin:0;white-space:pre-wrap;word-break:break-word;
font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.note{margin:0 0 8px;padding:4px 8px;border-left:3px solid #d4a72c;background:#fff8c5;
font-size:12px}
"""


def esc(text: str) -> str:
    """Escape observation text for element content (quotes too, for safety in any context)."""
    return html.escape(text, quote=True)


def page(body: str, *, title: str, css: str = "", body_class: str = "") -> str:
    """A complete document: doctype, charset, inline style only, then ``body`` as given.

    ``body_class`` must come from the renderer's own vocabulary, never from the observation.
    """
    class_attr = f' class="{body_class}"' if body_class else ""
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n"
        f"<style>{BASE_CSS}{css}</style>\n"
        f"</head>\n<body{class_attr}>\n{body}\n</body>\n</html>\n"
    )


def preformatted(text: str, *, title: str, note: str = "") -> str:
    """``text`` escaped in a ``<pre>``: the fallback when a structured renderer cannot parse.

    ``note`` is the renderer's own explanation (why it fell back) and is escaped too.
    """
    note_html = f'<p class="note">{esc(note)}</p>\n' if note else ""
    return page(f'{note_html}<pre class="text">{esc(text)}</pre>', title=title)
