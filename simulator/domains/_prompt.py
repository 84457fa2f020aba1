"""The shared shape of every domain's world-model system prompt.

Each domain supplies its own wording; this module only assembles the sections in
a fixed order, so that a world always yields a byte-identical prompt (the prefix
SGLang's radix cache reuses across the steps of an episode).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simulator.world import World

OBSERVATION_TAG = "predicted_observation"
INITIAL_STATE_HEADING = "## Initial state (what the agent saw first)"


def dump_json(value: Any) -> str:
    """Stable JSON for prompts: sorted keys, two-space indent, unicode kept."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)


def build_prompt(
    world: World,
    *,
    role: str,
    sections: Sequence[tuple[str, str]] = (),
    rules: Sequence[str] = (),
    observation_format: str,
) -> str:
    """Assemble a system prompt: role, world definition, rules, format, answer shape."""
    parts = [
        "# Your role",
        role.strip(),
        "The world described below is fictional. Treat it as real while you simulate it: "
        "every name, file, record and page in it exists exactly as defined, and nothing "
        "outside it does unless it follows naturally from it.",
        f"# World: {world.title.strip()}",
    ]
    if world.premise.strip():
        parts += ["## Premise", world.premise.strip()]
    if world.initial_observation.strip():
        parts += [INITIAL_STATE_HEADING, world.initial_observation.strip()]
    for heading, body in sections:
        if body.strip():
            parts += [f"## {heading}", body.strip()]
    common_rules = [
        "Stay consistent with the world definition and with every earlier observation in "
        "this conversation: state changed by earlier actions stays changed.",
        "Simulate the environment only. Never act for the agent, never address it, and "
        "never say that this is a simulation.",
        "If the action is invalid or would fail in the real environment, return the error "
        "the real environment would return.",
    ]
    parts += ["# Rules", "\n".join(f"- {rule}" for rule in [*common_rules, *rules])]
    parts += ["# Observation format", observation_format.strip()]
    parts += [
        "# How to answer",
        "First think step by step about what the action does to the environment's state. "
        f"Then write the observation, and nothing else, strictly inside "
        f"<{OBSERVATION_TAG}></{OBSERVATION_TAG}> tags.",
    ]
    return "\n\n".join(parts) + "\n"


def without_initial_state(prompt: str, world: World) -> str:
    """``prompt`` less the initial-state section :func:`build_prompt` put in it.

    The agentworld layout shows the initial state in the first turn instead, as
    the benchmark does; said twice it would cost tokens and invite the model to
    "continue" from the copy in the system prompt. Every built-in domain builds
    its prompt here, so the section is found by its exact text; a prompt built
    otherwise comes back unchanged.
    """
    state = world.initial_observation.strip()
    if not state:
        return prompt
    return prompt.replace(f"\n\n{INITIAL_STATE_HEADING}\n\n{state}", "", 1)
