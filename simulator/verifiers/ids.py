"""Element ids an action uses (a web bid, an android index) must exist on the page or
screen the agent acted on; otherwise the model answered an impossible action."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from simulator.domains.base import Action, Domain
from simulator.verifiers.base import VerifierResult, failed, passed

NAME = "ids_exist"


@runtime_checkable
class ReferencesIds(Protocol):
    """A domain whose actions name elements of the observation (web, android)."""

    def ids_in(self, observation: str) -> set[str]: ...

    def referenced_ids(self, action: Action) -> list[str]: ...


def ids_exist(domain: Domain, action: Action, previous: str) -> VerifierResult | None:
    """Check the action's ids against ``previous``; None when there is nothing to check."""
    if not isinstance(domain, ReferencesIds):
        return None
    wanted = domain.referenced_ids(action)
    present = domain.ids_in(previous)
    if not wanted or not present:
        return None
    missing = [ident for ident in wanted if ident not in present]
    if missing:
        return failed(
            NAME,
            f"{action.kind} uses {', '.join(repr(m) for m in missing)}, "
            "which is not on the previous observation",
        )
    return passed(NAME, f"{', '.join(repr(w) for w in wanted)} is on the previous observation")
