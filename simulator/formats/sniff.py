"""Which of the studio's formats a decoded record is, told from its keys alone.

One answer for every reader (the import service, the trace importer), so a file
is never read as one format by one door and as another by the other.
"""

from __future__ import annotations

from typing import Any

AWB = "awb"
TRAJECTORY = "trajectory"
SFT = "sft"
BUNDLE = "bundle"


def record_format(data: Any) -> str | None:
    """``trajectory``, ``bundle``, ``sft`` or ``awb``; None for anything else."""
    if not isinstance(data, dict):
        return None
    if "trajectory_version" in data:
        return TRAJECTORY
    if "bundle_version" in data:
        return BUNDLE
    if "messages" in data:
        return SFT
    if "turn_idx" in data or "prompt" in data:
        return AWB
    return None
