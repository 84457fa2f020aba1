"""Length sanity: an observation is neither blank (where blank is not a real result) nor huge."""

from __future__ import annotations

from simulator.verifiers.base import VerifierResult, failed, passed

NAME = "length_sanity"
#: Far above any real page or UI dump in the fixtures (the largest is ~53 kB) and
#: far below what would choke a browser or a database row.
MAX_OBSERVATION_CHARS = 400_000


def length_sanity(
    observation: str, *, allow_empty: bool, max_chars: int = MAX_OBSERVATION_CHARS
) -> VerifierResult:
    """Fail a blank observation (unless ``allow_empty``) or one over ``max_chars``."""
    if len(observation) > max_chars:
        return failed(NAME, f"{len(observation)} characters, over the limit of {max_chars}")
    if not observation.strip() and not allow_empty:
        return failed(NAME, "the observation is empty")
    return passed(NAME, f"{len(observation)} characters")
