"""The result every verifier returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class VerifierResult:
    """One check of one observation: which check, whether it passed, and why.

    ``reason`` is written for a person reading the step in the studio: on failure it
    says what is wrong and where; on success, what was checked.
    """

    name: str
    passed: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VerifierResult:
        return cls(name=str(data["name"]), passed=bool(data["passed"]), reason=str(data["reason"]))


def passed(name: str, reason: str) -> VerifierResult:
    return VerifierResult(name=name, passed=True, reason=reason)


def failed(name: str, reason: str) -> VerifierResult:
    return VerifierResult(name=name, passed=False, reason=reason)
