"""Building the world model's request, so that each request extends the last.

A request is: the system prompt (the domain's template with the world, plus the
agent's task, which never changes during an episode), then one user message per
past action and one assistant message per observation *exactly as the agent saw
it* (after enforced perturbations), then the current action. Two layouts
(:data:`~simulator.types.PromptLayout`) write those turns:

``plain``
    A user turn is the bare action, an assistant turn the bare observation; the
    answer instruction lives in the system prompt. For models other than
    Qwen-AgentWorld.
``agentworld``
    AgentWorldBench's turn text (:mod:`simulator.awb_turns`), the layout every
    published Qwen-AgentWorld result was measured in: ``### Turn N`` user turns
    with the fenced action, the first one carrying the world's initial state
    (and, for os, the agent's task) in sections the domain names; assistant
    turns are the observation after its marker. The benchmark's answer
    instruction ends the current turn only. The system prompt is the domain's
    without the initial state (the first turn has it), or an official template
    filled by :func:`fill_system_template`.
``edit``
    For the embedded 135M demo model only, and the one layout whose requests do
    not extend each other: a model that small cannot follow a long conversation,
    but it can copy. The system prompt is the domain's without the initial state
    and without its "think first" answer instructions; one user message holds the
    agent's task, the earlier actions, the previous observation (the initial
    state on the first step) as the starting point, the action and an
    instruction to rewrite that observation as the action leaves it. The
    backend starts the answer with the opening observation tag.

Control instructions from prompted perturbations are appended to the current
user message only, in a delimited block (before the answer instruction), and are
never carried into history: a past turn's user message is its action as
rendered without them. So every message of request k except its last (the
current user message) reappears byte for byte at the start of request k+1, and
SGLang's radix cache reuses the whole history. The world model's reasoning is
never fed back.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from simulator.awb_turns import INSTRUCTION, render_observation, render_turn
from simulator.errors import InvalidWorld
from simulator.types import Message, PromptLayout

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


def system_message(
    world: World,
    task: str | None = None,
    *,
    layout: PromptLayout = "plain",
    template: str | None = None,
) -> Message:
    """The system prompt: the domain's, plus the agent's task when there is one.

    In the agentworld layout the initial state is left to the first turn, an
    official ``template`` replaces the domain's prompt when given, and a task
    the domain puts in the first turn is not repeated here.
    """
    domain = domain_for(world)
    if layout == "plain":
        content = domain.system_prompt(world)
    elif template is not None:
        content = fill_system_template(template, world)
    else:
        from simulator.domains._prompt import without_initial_state  # lazily, as domain_for

        content = without_initial_state(domain.system_prompt(world), world)
    if task and not (layout == "agentworld" and domain.task_in_first_turn):
        content = f"{content}\n\n{TASK_HEADING}\n\n{task}"
    return {"role": "system", "content": content}


_PLACEHOLDER = re.compile(r"\{(tool_definitions|demonstrations)\}")


def fill_system_template(template: str, world: World) -> str:
    """An official system-prompt template with this world's tools and demonstrations.

    ``{tool_definitions}`` becomes the world's tools as JSON, ``{demonstrations}``
    its ``extras["demonstrations"]`` (``{action, observation}`` pairs) as
    benchmark turns; either is empty text when the world has none. The
    templates contain JSON braces, so ``str.format`` cannot fill them; the two
    names are replaced in one pass, so a tool description that happens to
    contain ``{demonstrations}`` is left as written.
    """
    domain = domain_for(world)
    tools = domain.tool_definitions(world)
    values = {
        "tool_definitions": json.dumps(tools, ensure_ascii=False, indent=2) if tools else "",
        "demonstrations": _demonstrations(world),
    }
    return _PLACEHOLDER.sub(lambda match: values[match[1]], template)


def _demonstrations(world: World) -> str:
    demonstrations = world.extras.get("demonstrations")
    if not isinstance(demonstrations, list):
        return ""
    fence = domain_for(world).action_fence
    pairs = [
        (str(item["action"]), str(item["observation"]))
        for item in demonstrations
        if isinstance(item, dict) and "action" in item and "observation" in item
    ]
    return "\n\n".join(
        f"{render_turn(index, action, fence=_fence(action, fence))}\n\n"
        f"{render_observation(observation)}"
        for index, (action, observation) in enumerate(pairs, 1)
    )


def _fence(action: str, fence: str | None) -> str | None:
    """The fence for ``action``: none when the agent already fenced it (never doubled)."""
    return None if action.startswith("```") else fence


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
    layout: PromptLayout = "plain",
    system_template: str | None = None,
) -> list[Message]:
    """The request for the next step (see the module docstring for both layouts).

    ``system_template`` (agentworld layout only) is an official system prompt
    for :func:`fill_system_template`.
    """
    if layout == "edit":
        return _edit_request(world, history, action, instructions, task or "")
    messages: list[Message] = [system_message(world, task, layout=layout, template=system_template)]
    if layout == "agentworld":
        return messages + _agentworld_turns(world, history, action, instructions, task or "")
    for turn in history:
        messages.append({"role": "user", "content": turn.action})
        messages.append({"role": "assistant", "content": turn.observation})
    messages.append({"role": "user", "content": with_instructions(action, instructions)})
    return messages


def _agentworld_turns(
    world: World, history: Sequence[Turn], action: str, instructions: Sequence[str], task: str
) -> list[Message]:
    domain = domain_for(world)
    first = domain.first_turn_sections(world, task)

    def turn_text(index: int, turn_action: str) -> str:
        sections = first if index == 1 else ()
        fence = _fence(turn_action, domain.action_fence)
        return render_turn(index, turn_action, fence=fence, sections=sections)

    messages: list[Message] = []
    for index, turn in enumerate(history, 1):
        messages.append({"role": "user", "content": turn_text(index, turn.action)})
        messages.append({"role": "assistant", "content": render_observation(turn.observation)})
    current = with_instructions(turn_text(len(history) + 1, action), instructions)
    messages.append({"role": "user", "content": current + INSTRUCTION})
    return messages


EDIT_HEADING_PREVIOUS = "# Current observation"
EDIT_NOTHING_YET = "(nothing yet: this is the first action)"
_ANSWER_SECTION = "\n\n# How to answer"


def _edit_request(
    world: World, history: Sequence[Turn], action: str, instructions: Sequence[str], task: str
) -> list[Message]:
    """The ``edit`` layout (see the module docstring): two messages, rebuilt at every step."""
    from simulator.domains._prompt import without_initial_state  # lazily, as domain_for

    domain = domain_for(world)
    system = without_initial_state(domain.system_prompt(world), world).split(_ANSWER_SECTION)[0]
    previous = history[-1].observation if history else world.initial_observation
    parts = [f"{TASK_HEADING}\n\n{task}"] if task else []
    if history:
        actions = "\n".join(f"{index}. {turn.action}" for index, turn in enumerate(history, 1))
        parts.append(f"# Earlier actions\n\n{actions}")
    parts.append(f"{EDIT_HEADING_PREVIOUS}\n\n{previous.strip() or EDIT_NOTHING_YET}")
    parts.append(f"# Action\n\n{with_instructions(action, instructions)}")
    if previous.strip():
        how = (
            "Write the observation as it is after this action: copy the current observation "
            "and change only what the action changes (for a page, the whole changed page)."
        )
    else:
        how = "Write the observation this action produces, in the observation format."
    parts.append(f"{how} Put it inside <predicted_observation></predicted_observation> tags.")
    return [
        {"role": "system", "content": system.rstrip() + "\n"},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


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
