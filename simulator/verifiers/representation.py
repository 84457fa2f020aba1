"""Keeps representation: the observation is in one of its domain's formats, and GUI
observations stay in the format of the previous one (an AXTree never turns into HTML)."""

from __future__ import annotations

from simulator.domains.base import JSON, TERMINAL, TEXT, Domain
from simulator.verifiers.base import VerifierResult, failed, passed

NAME = "keeps_representation"
# Formats that legitimately alternate from step to step: a tool returns JSON, then a
# plain-text error; a terminal prints output, then a screen with a prompt.
_FREE_TEXT = frozenset((JSON, TEXT, TERMINAL))


def keeps_representation(
    domain: Domain, observation: str, previous: str | None = None
) -> VerifierResult:
    """Check the observation's format against the domain and the previous observation."""
    found = domain.detect_format(observation)
    if found is None:
        formats = ", ".join(domain.observation_formats)
        return failed(NAME, f"the observation is in none of {domain.name}'s formats ({formats})")
    if previous is None:
        return passed(NAME, f"{found}")
    before = domain.detect_format(previous)
    if before is not None and before != found and not {before, found} <= _FREE_TEXT:
        return failed(NAME, f"the previous observation was {before}, this one is {found}")
    return passed(NAME, f"{found}, like the previous observation")
