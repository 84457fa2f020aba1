"""Building the world model's request, so that each request extends the last.

A request is: the system prompt (the domain's template with the world, plus the
agent's task, which never changes during an episode), then one user message per
past action and one assistant message per observation *exactly as the agent saw
it* (after enforced perturbations), then the current action.

Control instructions from prompted perturbations are appended to the current
user message only, in a delimited block, and are never carried into history:
a past turn's user message is its bare action. So every message of request k
except its last (the current user message) reappears byte for byte at the start
of request k+1, and SGLang's radix cache reuses the whole history. The world
model's reasoning is never fed back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from simulator.errors import InvalidWorld
from simulator.types import Message

if TYPE_CHECKING:
    from simulator.domains.base import Domain
    from simulator.episode import Turn
    from simulator.world import World

CONTROL_OPEN = "<simulation_control>"
CONTROL_CLOSE = "</simulation_control>"
CONTROL_PREAMBLE = "Apply these instructions to this observation only:"
TASK_HEADING = "# The agent's task"


def domain_for(world: World) -> Domain:
    """The domain that simulates ``world`` (imported lazily: the registry is heavy)."""
    from simulator.domains import get_domain

    try:
        return get_domain(world.domain)
    except KeyError:
        raise InvalidWorld([f"domain: unknown domain {world.domain!r}"]) from None


def system_message(world: World, task: str | None = None) -> Message:
    """The system prompt: the domain's, plus the agent's task when there is one."""
    content = domain_for(world).system_prompt(world)
    if task:
        content = f"{content}\n\n{TASK_HEADING}\n\n{task}"
    return {"role": "system", "content": content}


def with_instructions(action: str, instructions: Sequence[str]) -> str:
    """The current user message: the action, then a delimited control block if any."""
    if not instructions:
        return action
    lines = "\n".join(f"- {text}" for text in instructions)
    return f"{action}\n\n{CONTROL_OPEN}\n{CONTROL_PREAMBLE}\n{lines}\n{CONTROL_CLOSE}"


def build_messages(
    world: World,
    history: Sequence[Turn],
    action: str,
    *,
    instructions: Sequence[str] = (),
    task: str | None = None,
) -> list[Message]:
    """The request for the next step (see the module docstring for the prefix property)."""
    messages: list[Message] = [system_message(world, task)]
    for turn in history:
        messages.append({"role": "user", "content": turn.action})
        messages.append({"role": "assistant", "content": turn.observation})
    messages.append({"role": "user", "content": with_instructions(action, instructions)})
    return messages


def render_transcript(messages: Sequence[Message]) -> str:
    """All messages concatenated, each as ``<|role|>\\ncontent\\n``: what prefix reuse is measured on."""
    return "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages)


def shared_prefix_chars(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings."""
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:  # binary search on slices: fast for 100 KB prompts
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A rough token count for the UI's prompt size: 4 chars per token + 4 per message.

    Four characters per token is the usual rule of thumb for English text with
    BPE tokenizers; code, JSON and non-Latin scripts use more tokens, so treat
    the number as an order of magnitude, not a budget check.
    """
    return sum(math.ceil(len(m["content"]) / 4) + 4 for m in messages)
