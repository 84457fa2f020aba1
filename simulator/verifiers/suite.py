"""Which verifiers run for a domain, and in what order."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulator.domains import get_domain
from simulator.domains.base import TERMINAL, Action, Domain
from simulator.verifiers.base import VerifierResult
from simulator.verifiers.ids import ids_exist
from simulator.verifiers.json_checks import json_valid, output_schema
from simulator.verifiers.length import length_sanity
from simulator.verifiers.representation import keeps_representation
from simulator.verifiers.structure import well_formed
from simulator.verifiers.terminal import terminal_prompt

if TYPE_CHECKING:
    from simulator.world import World


def _domain(domain: Domain | str) -> Domain:
    return get_domain(domain) if isinstance(domain, str) else domain


def _format_checks(
    domain: Domain, observation: str, previous: str | None, action: Action | None
) -> list[VerifierResult]:
    allow_empty = bool(getattr(domain, "allows_empty_observation", False))
    results = [
        length_sanity(observation, allow_empty=allow_empty),
        keeps_representation(domain, observation, previous),
    ]
    found = domain.detect_format(observation)
    optional = [
        well_formed(found, observation) if found else None,
        json_valid(observation) if domain.json_observations else None,
        terminal_prompt(observation, previous=previous, action=action)
        if TERMINAL in domain.observation_formats
        else None,
    ]
    return results + [result for result in optional if result is not None]


def verify_format(domain: Domain | str, observation: str) -> list[VerifierResult]:
    """The checks that need nothing but the observation (what ``python -m simulator verify`` runs)."""
    return _format_checks(_domain(domain), observation, None, None)


def run_verifiers(
    domain: Domain | str,
    observation: str,
    *,
    action: Action | None = None,
    previous: str | None = None,
    world: World | None = None,
) -> list[VerifierResult]:
    """Every rule check that applies to one step's observation.

    The format checks always run; ``previous`` adds the same-format and (with
    ``action``) the ids-exist checks; ``action`` with ``world`` adds the mcp output
    schema. Checks that do not apply are left out rather than reported as passed.
    """
    resolved = _domain(domain)
    results = _format_checks(resolved, observation, previous, action)
    if action is not None and previous is not None:
        checked = ids_exist(resolved, action, previous)
        if checked is not None:
            results.append(checked)
    if action is not None and world is not None and resolved.json_observations:
        schema = output_schema(observation, action, world)
        if schema is not None:
            results.append(schema)
    return results
