"""What a domain asks a person for: the world editor's fields and the action composer.

The studio draws both forms from these descriptions and never names a domain, so a
new domain gets its editor and its composer by describing them here, in its own
module. Everything is plain data: the studio renders it and posts the fields back
to :meth:`simulator.domains.Domain.compose`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from simulator.errors import InvalidAction

#: How the world editor shows a field: one line, several lines, JSON or code.
EditorKind = Literal["text", "textarea", "json", "code"]

#: How the composer shows a field: a select of ``choices``, a line of text, a number,
#: or a JSON document.
ComposerKind = Literal["choice", "text", "number", "json"]


@dataclass(frozen=True)
class EditorField:
    """One field of the world editor."""

    name: str
    label: str
    kind: EditorKind
    help: str = ""
    #: True for keys of ``World.extras``; False for top-level world keys.
    extra: bool = True


@dataclass(frozen=True)
class ComposerField:
    """One field of the action composer; its value is posted under ``name``."""

    name: str
    label: str
    kind: ComposerKind = "text"
    choices: tuple[str, ...] = ()
    #: Shown beside the label: what the field takes.
    hint: str = ""
    placeholder: str = ""
    required: bool = False
    #: True when ``choices`` are the ids on the current screen; the page refreshes
    #: them after every step.
    elements: bool = False


@dataclass(frozen=True)
class ComposerGroup:
    """Fields shown together under a title, e.g. one tool's arguments."""

    title: str
    description: str
    fields: tuple[ComposerField, ...]


@dataclass(frozen=True)
class Composer:
    """The whole composer: its fields, its groups and the free-text action box.

    The free-text box is always there, so any action can be typed; ``action_label``
    says whether it is the main input (a shell's command) or a fallback.
    """

    fields: tuple[ComposerField, ...] = ()
    groups: tuple[ComposerGroup, ...] = ()
    action_label: str = "Or type the action"
    action_placeholder: str = ""

    @property
    def element_field(self) -> ComposerField | None:
        """The field listing the current screen's elements, if the composer has one."""
        return next((f for f in self.fields if f.elements), None)


def whole_number(text: str, *, name: str, default: int) -> int:
    """A composer field's whole number (``default`` when empty); InvalidAction otherwise."""
    try:
        return int(text) if text.strip() else default
    except ValueError:
        raise InvalidAction(f"{name} must be a whole number, not {text!r}") from None


#: The most element ids a composer lists; a page may have thousands.
MAX_ELEMENTS = 500


def element_choices(ids: Iterable[str]) -> tuple[str, ...]:
    """Element ids in counting order (2 before 10), at most :data:`MAX_ELEMENTS`."""
    return tuple(sorted(ids, key=lambda v: (len(v), v))[:MAX_ELEMENTS])
