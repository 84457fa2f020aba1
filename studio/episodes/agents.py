"""Agent policies that pick the next action: scripted, replay and LLM.

A human agent is the composer on the episode page; the others are driven by the
``episodes.agent_run`` task. Scripted and replay agents play a list of actions
in order (a replay agent's list comes from an imported real trace). An LLM agent
asks an OpenAI-compatible endpoint (or the embedded model) for the next action
with a short prompt, and the domain's parser decides whether the answer is one.
"""

from __future__ import annotations

import re
from typing import Any

from simulator.backends import ModelRequest, create_backend
from simulator.errors import InvalidAction
from simulator.prompting import domain_for
from simulator.types import Message, Sampling
from studio.core.endpoints import default_endpoint_spec
from studio.core.models import ModelEndpoint
from studio.episodes.models import Episode
from studio.episodes.selectors import history, last_observation
from studio.lib.step_loop import run_on_step_loop

_FENCE = re.compile(r"```[a-zA-Z]*\n?(.*?)```", re.DOTALL)


def next_action(episode: Episode) -> str | None:
    """The agent's next action, or None when a scripted/replay agent has none left.

    Raises InvalidAction when an LLM agent answers with something the domain refuses.
    """
    agent = episode.agent or {"kind": "human"}
    kind = agent.get("kind", "human")
    index = episode.steps.count()  # the next step's 0-based position in a script
    if kind in ("scripted", "replay"):
        actions = list(agent.get("actions", []))
        return actions[index] if index < len(actions) else None
    if kind == "llm":
        return llm_action(episode, agent)
    return None


def agent_messages(episode: Episode) -> list[Message]:
    """The LLM agent's prompt: who it is, the task, its past actions and the last observation."""
    world = episode.world_revision.to_world()
    domain = domain_for(world)
    past = history(episode, before=10**9)
    system = (
        f"You are an agent in a {domain.title} environment ({domain.name}). "
        f"World: {world.title}. {world.premise}\n"
        f"Task: {episode.task or 'explore the environment'}\n"
        "Answer with exactly one action and nothing else, in this format: "
        f"{domain.example_action or 'one action'}"
    )
    actions = "\n".join(f"- {turn.action}" for turn in past[-10:]) or "(none yet)"
    user = (
        f"Your previous actions:\n{actions}\n\nLast observation:\n"
        f"{last_observation(episode)[-6000:]}\n\nNext action:"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_agent_answer(episode: Episode, text: str) -> str:
    """The first part of ``text`` the domain accepts as an action."""
    world = episode.world_revision.to_world()
    domain = domain_for(world)
    candidates: list[str] = [str(m).strip() for m in _FENCE.findall(text)]
    stripped = text.strip()
    candidates += [stripped, *(line.strip() for line in stripped.splitlines())]
    for candidate in candidates:
        if not candidate:
            continue
        try:
            domain.parse_action(candidate, world)
        except InvalidAction:
            continue
        return candidate
    raise InvalidAction(f"the agent's answer is not a {domain.name} action: {stripped[:200]!r}")


def _spec(episode: Episode, agent: dict[str, Any]) -> dict[str, Any]:
    name = agent.get("endpoint")
    if name:
        endpoint = (
            ModelEndpoint.objects.filter(name=name, project=episode.project).first()
            or ModelEndpoint.objects.filter(name=name, project=None).first()
        )
        if endpoint is None:
            raise InvalidAction(f"no model endpoint called {name!r}")
        return endpoint.to_spec()
    return default_endpoint_spec()


def llm_action(episode: Episode, agent: dict[str, Any]) -> str:
    spec = _spec(episode, agent)
    sampling = Sampling(temperature=0.2, max_tokens=int(agent.get("max_tokens", 256)))
    request = ModelRequest(messages=tuple(agent_messages(episode)), sampling=sampling)

    async def ask() -> str:
        backend = create_backend(spec)
        parts: list[str] = []
        try:
            async for chunk in backend.stream(request):
                if chunk.kind == "content":
                    parts.append(chunk.text)
        finally:
            await backend.aclose()
        return "".join(parts)

    answer: str = run_on_step_loop(ask)
    return parse_agent_answer(episode, answer)
