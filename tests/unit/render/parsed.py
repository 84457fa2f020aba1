"""A rendered document parsed back into elements, so tests can check its structure."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    ]
)


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parent: Element | None
    children: list[Element] = field(default_factory=list)
    parts: list[str | Element] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    @property
    def text(self) -> str:
        return "".join(part if isinstance(part, str) else part.text for part in self.parts)

    def ancestors(self) -> list[Element]:
        found = []
        node = self.parent
        while node is not None:
            found.append(node)
            node = node.parent
        return found


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None)
        self.stack = [self.root]
        self.all: list[Element] = []
        self.raw_attrs: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.raw_attrs.extend((tag, name, value) for name, value in attrs)
        element = Element(tag, {name: value or "" for name, value in attrs}, self.stack[-1])
        self.stack[-1].children.append(element)
        self.stack[-1].parts.append(element)
        self.all.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, 0, -1):
            if self.stack[index].tag == tag:
                del self.stack[index:]
                return

    def handle_data(self, data):
        self.stack[-1].parts.append(data)


@dataclass
class Parsed:
    root: Element
    elements: list[Element]
    attributes: list[tuple[str, str, str | None]]  # (tag, name, value) of every attribute

    def find(self, tag: str | None = None, cls: str | None = None) -> list[Element]:
        return [
            element
            for element in self.elements
            if (tag is None or element.tag == tag) and (cls is None or cls in element.classes)
        ]

    @property
    def text(self) -> str:
        return self.root.text


def parse(document: str) -> Parsed:
    builder = _Builder()
    builder.feed(document)
    builder.close()
    return Parsed(builder.root, builder.all, builder.raw_attrs)


def style_of(element: Element) -> dict[str, str]:
    """The element's inline style as {property: value}."""
    rules = [rule.split(":", 1) for rule in element.attrs.get("style", "").split(";") if rule]
    return {name.strip(): value.strip() for name, value in rules}
