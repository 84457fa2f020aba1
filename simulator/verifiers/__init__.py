"""Rule verifiers: cheap, deterministic checks of one observation.

Each verifier is a small function returning a :class:`VerifierResult`. Call
:func:`run_verifiers` for a step (it picks the checks that apply to the domain,
action and previous observation) or :func:`verify_format` for a lone file.
"""

from __future__ import annotations

from simulator.verifiers.base import VerifierResult
from simulator.verifiers.suite import run_verifiers, verify_format

__all__ = ["VerifierResult", "run_verifiers", "verify_format"]
