"""Perturbations: controlled changes to what the world model shows the agent.

Each kind lives in its own module and registers a :class:`KindInfo` in
:data:`PERTURBATION_KINDS`. A *prompted* perturbation adds a control instruction
to the current request; an *enforced* one transforms the parsed observation.
"""

from __future__ import annotations

from simulator.perturbations.apply import enforce, firing_indexes, prompted_firings
from simulator.perturbations.registry import PERTURBATION_KINDS, Enforced, KindInfo, Param
from simulator.perturbations.spec import (
    Firing,
    Mode,
    Perturbation,
    StepContext,
    Trigger,
    action_tool_name,
    fires,
    perturbation_problems,
)

__all__ = [
    "PERTURBATION_KINDS",
    "Enforced",
    "Firing",
    "KindInfo",
    "Mode",
    "Param",
    "Perturbation",
    "StepContext",
    "Trigger",
    "action_tool_name",
    "enforce",
    "fires",
    "firing_indexes",
    "perturbation_problems",
    "prompted_firings",
]
