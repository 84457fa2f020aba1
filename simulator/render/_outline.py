"""A nested, labelled outline of page elements: what AXTree and ARIA snapshots render to.

Both accessibility formats describe a page as a tree of (role, name, properties);
showing that tree with each role styled like the control it stands for (links look
like links, buttons like buttons, headings are headings) lets a reviewer read a
simulated page the way the agent "sees" it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simulator.render._page import esc, page

# Role -> how the element's name is styled. Anything not listed is a plain labelled box.
_ROLE_STYLES = {
    "link": "link",
    "button": "button",
    "menuitem": "button",
    "tab": "button",
    "option": "option",
    "textbox": "field",
    "searchbox": "field",
    "combobox": "field",
    "spinbutton": "field",
    "checkbox": "check",
    "radio": "check",
    "switch": "check",
    "menuitemcheckbox": "check",
    "menuitemradio": "check",
    "img": "image",
    "image": "image",
    "statictext": "text",
    "text": "text",
    "heading": "heading",
}
# Text nodes are the page's words, not controls: they get no role badge.
_BADGELESS = frozenset({"text"})
# Properties shown as state on the element rather than as a key=value chip.
_STATE_FLAGS = {"focused": "focused", "disabled": "disabled", "selected": "selected"}
_TRUE = frozenset({"true", "True", "1", ""})

CSS = """
ul.tree,ul.kids{list-style:none;margin:0;padding:0}
ul.kids{margin-left:14px;padding-left:8px;border-left:1px dotted #d0d7de}
li.node{margin:2px 0}
.line{display:flex;flex-wrap:wrap;align-items:baseline;gap:6px}
.role{font:11px/1.6 ui-monospace,monospace;color:#57606a;background:#eaeef2;border-radius:4px;
padding:0 5px}
.id{font:11px ui-monospace,monospace;color:#8c959f}
.prop{font:11px ui-monospace,monospace;color:#6e7781;word-break:break-all}
.name.link{color:#0969da;text-decoration:underline}
.name.button{border:1px solid #8c959f;border-radius:6px;padding:1px 10px;background:#f6f8fa}
.name.option{border-bottom:1px solid #d0d7de}
.name.field{border:1px solid #8c959f;border-radius:3px;padding:1px 6px;min-width:10em;
background:#fff}
.name.check::before{content:"\\2610\\00a0"}
.name.check.checked::before{content:"\\2611\\00a0"}
.name.image{font-style:italic;color:#57606a}
.name.image::before{content:"\\1F5BC\\00a0"}
h2.name{font-size:18px;margin:4px 0}
.value{font-family:ui-monospace,monospace;color:#1a7f37}
li.focused>.line{outline:2px solid #0969da;outline-offset:1px}
li.disabled>.line{opacity:.5}
li.selected>.line{background:#ddf4ff}
"""


@dataclass
class OutlineNode:
    """One element of the outline; every string here is untrusted and escaped on output."""

    role: str
    name: str = ""
    ident: str = ""  # the agent-facing id: BrowserGym bid or Playwright ref
    props: list[tuple[str, str]] = field(default_factory=list)
    children: list[OutlineNode] = field(default_factory=list)


def add_node(
    roots: list[OutlineNode], stack: list[tuple[int, OutlineNode]], indent: int, node: OutlineNode
) -> None:
    """Attach ``node`` under the nearest preceding node indented less than it."""
    while stack and stack[-1][0] >= indent:
        stack.pop()
    (stack[-1][1].children if stack else roots).append(node)
    stack.append((indent, node))


def _level(props: list[tuple[str, str]]) -> int:
    for key, value in props:
        if key == "level" and value.isdigit():
            return min(max(int(value), 1), 6)
    return 2


def _open_node(node: OutlineNode) -> str:
    """The ``<li>`` start and the element's line; children and ``</li>`` follow."""
    style = _ROLE_STYLES.get(node.role.lower(), "plain")
    flags = {key for key, value in node.props if key in _STATE_FLAGS and value in _TRUE}
    checked = any(key == "checked" and value in _TRUE for key, value in node.props)
    li_classes = " ".join(["node", *sorted(_STATE_FLAGS[flag] for flag in flags)])
    out = [f'<li class="{li_classes}"><div class="line">']
    if style not in _BADGELESS:
        out.append(f'<span class="role">{esc(node.role)}</span>')
    if style == "heading":
        level = _level(node.props)
        out.append(f'<h{level} class="name">{esc(node.name)}</h{level}>')
    elif node.name or style in ("field", "check"):
        extra = " checked" if checked else ""
        out.append(f'<span class="name {style}{extra}">{esc(node.name)}</span>')
    if node.ident:
        out.append(f'<span class="id">[{esc(node.ident)}]</span>')
    for key, value in node.props:
        if key in _STATE_FLAGS or (key == "checked" and style == "check"):
            continue
        css_class = "value" if key == "value" else "prop"
        shown = f"{key}={value}" if value else key
        out.append(f'<span class="{css_class}">{esc(shown)}</span>')
    out.append("</div>")
    return "".join(out)


def render_outline(roots: list[OutlineNode], *, title: str) -> str:
    """The document for an outline: nested ``<ul>``/``<li class="node">``, one per element."""
    out = ['<ul class="tree">']
    # Iterative, so that a hostile tree thousands of levels deep cannot exhaust the stack.
    pending: list[OutlineNode | str] = list(reversed(roots))
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        out.append(_open_node(item))
        if item.children:
            out.append('<ul class="kids">')
            pending.append("</ul></li>\n")
            pending.extend(reversed(item.children))
        else:
            out.append("</li>\n")
    out.append("</ul>")
    return page("".join(out), title=title, css=CSS)
