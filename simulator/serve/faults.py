"""Faults the protocol test server injects, chosen per request.

A request picks a fault with the ``X-Fault`` header or a model name
``fault:<spec>``. Specs:

    500                  answer HTTP 500, every time
    500-once             answer 500 the first time this spec is seen, then succeed
    429                  answer HTTP 429, every time
    429-once             answer 429 the first time, then succeed
    disconnect-after:N   stream N tokens, then drop the connection
    stall                send the response headers, then nothing (non-streaming: nothing)
    stall-after:N        stream N tokens, then go silent until the client leaves
"""

from __future__ import annotations

from dataclasses import dataclass

_KINDS = {"500", "500-once", "429", "429-once", "disconnect-after", "stall", "stall-after"}
_NEEDS_COUNT = {"disconnect-after", "stall-after"}


@dataclass(frozen=True)
class Fault:
    """A parsed fault spec; ``spec`` is the text it came from (counts are kept per spec)."""

    kind: str
    count: int = 0
    spec: str = ""

    @property
    def status(self) -> int | None:
        """The HTTP error status this fault answers with, if any."""
        return int(self.kind[:3]) if self.kind[:3] in {"500", "429"} else None

    @property
    def once(self) -> bool:
        return self.kind.endswith("-once")


def parse_fault(spec: str) -> Fault:
    """Parse ``500-once``, ``disconnect-after:5``...; raises ValueError naming the bad spec."""
    kind, _, arg = spec.partition(":")
    if kind not in _KINDS or (kind in _NEEDS_COUNT) != bool(arg) or (arg and not arg.isdigit()):
        raise ValueError(f"unknown fault {spec!r}")
    return Fault(kind=kind, count=int(arg) if arg else 0, spec=spec)


def fault_for(model: str, header: str | None) -> Fault | None:
    """The fault a request asks for: the header wins over a ``fault:`` model name."""
    if header:
        return parse_fault(header.strip())
    if model.startswith("fault:"):
        return parse_fault(model[len("fault:") :])
    return None
