"""JSON observations (tool results, search results) as a collapsible tree, without script.

Objects and arrays are ``<details>``/``<summary>`` elements, so they fold and
unfold natively; keys, strings, numbers, booleans and null are styled by type.
Text that is not JSON is shown escaped and preformatted instead.
"""

from __future__ import annotations

import json
from typing import Any

from simulator.render._page import esc, page, preformatted

# Containers nested deeper than this start folded, so large results open readable.
OPEN_DEPTH = 3

CSS = """
.json{font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.json ul{list-style:none;margin:0;padding-left:18px;border-left:1px dotted #d0d7de}
.json summary{cursor:pointer}
.key{color:#953800}.str{color:#0a3069;white-space:pre-wrap;word-break:break-word}
.num{color:#0550ae}.bool{color:#8250df}.null{color:#6e7781;font-style:italic}
.count{color:#8c959f;font-size:11px;margin-left:6px}
"""


class _Pairs(list[tuple[str, Any]]):
    """An object's members in order, duplicates kept: the tree shows what the model wrote."""


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return f'<span class="str">{esc(json.dumps(value, ensure_ascii=False))}</span>'
    if value is None:
        return '<span class="null">null</span>'
    if isinstance(value, bool):
        return f'<span class="bool">{"true" if value else "false"}</span>'
    return f'<span class="num">{esc(json.dumps(value))}</span>'


def _label(key: str | None) -> str:
    if key is None:
        return ""
    return f'<span class="key">{esc(json.dumps(key, ensure_ascii=False))}</span>: '


def _tree(value: Any, out: list[str]) -> None:
    """Append ``value``'s HTML; iterative, so deep nesting cannot exhaust the stack."""
    pending: list[tuple[str | None, Any, int] | str] = [(None, value, 0)]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        key, node, depth = item
        if isinstance(node, _Pairs | list):
            is_object = isinstance(node, _Pairs)
            children = [(k, v) for k, v in node] if is_object else [(None, v) for v in node]
            noun = ("key" if is_object else "item") + ("" if len(children) == 1 else "s")
            brackets = "{}" if is_object else "[]"
            opened = " open" if depth < OPEN_DEPTH else ""
            out.append(
                f"<details{opened}><summary>{_label(key)}{brackets[0]}…{brackets[1]}"
                f'<span class="count">{len(children)} {noun}</span></summary><ul>'
            )
            pending.append("</ul></details>")
            for child_key, child in reversed(children):
                pending.extend(["</li>", (child_key, child, depth + 1), "<li>"])
        else:
            out.append(f"{_label(key)}{_scalar(node)}")


def render_json(observation: str, *, title: str = "") -> str:
    """The JSON value as a foldable tree; invalid JSON as escaped preformatted text."""
    try:
        value = json.loads(observation, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        return preformatted(observation, title=title, note="not valid JSON; shown as text")
    out: list[str] = ['<div class="json">']
    _tree(value, out)
    out.append("</div>")
    return page("".join(out), title=title, css=CSS)
