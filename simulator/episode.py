"""The episode's value types: its state, one step's result, and history imports.

Everything here is immutable and serialisable, so the studio can store a step,
a worker can rebuild the state from the database, and a trajectory file can
carry the exact request that produced each observation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from simulator.errors import FormatError
from simulator.perturbations import Firing, Perturbation
from simulator.types import Message, PromptLayout, Sampling, Usage
from simulator.verifiers import VerifierResult
from simulator.world import World


@dataclass(frozen=True)
class Turn:
    """One past step as the agent saw it: its action and the observation it got."""

    action: str
    observation: str

    def to_dict(self) -> dict[str, str]:
        return {"action": self.action, "observation": self.observation}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Turn:
        return cls(action=str(data["action"]), observation=str(data["observation"]))


@dataclass(frozen=True)
class Delta:
    """A piece of streamed text for the UI: reasoning or observation."""

    kind: Literal["reasoning", "observation"]
    text: str


@dataclass(frozen=True)
class Timings:
    """Seconds since the step began: request sent, first token, done."""

    queued_s: float = 0.0
    first_token_s: float | None = None
    done_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Timings:
        return cls(
            queued_s=float(data.get("queued_s", 0.0)),
            first_token_s=data.get("first_token_s"),
            done_s=float(data.get("done_s", 0.0)),
        )


def usage_from_dict(data: Mapping[str, Any]) -> Usage:
    known = {k: data[k] for k in Usage.__dataclass_fields__ if k in data}
    return Usage(**known)


@dataclass(frozen=True)
class StepResult:
    """Everything one step produced.

    ``observation`` is what the agent sees (after enforced perturbations) and what
    goes into history; ``raw_output`` is the model's content text unchanged;
    ``messages`` is the exact request sent.
    """

    action: str
    observation: str
    reasoning: str
    raw_output: str
    messages: tuple[Message, ...]
    firings: tuple[Firing, ...] = ()
    verifiers: tuple[VerifierResult, ...] = ()
    timings: Timings = field(default_factory=Timings)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "observation": self.observation,
            "reasoning": self.reasoning,
            "raw_output": self.raw_output,
            "messages": [dict(m) for m in self.messages],
            "firings": [f.to_dict() for f in self.firings],
            "verifiers": [v.to_dict() for v in self.verifiers],
            "timings": self.timings.to_dict(),
            "usage": asdict(self.usage),
            "finish_reason": self.finish_reason,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StepResult:
        messages: tuple[Message, ...] = tuple(
            {"role": m["role"], "content": m["content"]} for m in data.get("messages", [])
        )
        return cls(
            action=str(data["action"]),
            observation=str(data["observation"]),
            reasoning=str(data.get("reasoning", "")),
            raw_output=str(data.get("raw_output", "")),
            messages=messages,
            firings=tuple(Firing.from_dict(f) for f in data.get("firings", [])),
            verifiers=tuple(VerifierResult.from_dict(v) for v in data.get("verifiers", [])),
            timings=Timings.from_dict(data.get("timings", {})),
            usage=usage_from_dict(data.get("usage", {})),
            finish_reason=data.get("finish_reason"),
            notes=tuple(data.get("notes", [])),
        )

    def turn(self) -> Turn:
        return Turn(self.action, self.observation)


@dataclass(frozen=True)
class EpisodeState:
    """Where an episode stands: the world, the task, the history and the rules.

    ``seed`` decides which probabilistic perturbations fire; ``sampling``
    overrides the world's sampling settings. ``layout`` is how requests are
    written (:mod:`simulator.prompting`): ``plain`` unless the caller knows its
    model, because only Qwen-AgentWorld was trained on the ``agentworld`` turn
    text. ``system_template`` is an official system prompt to fill in its place
    of the domain's (agentworld layout only).
    """

    world: World
    task: str = ""
    history: tuple[Turn, ...] = ()
    perturbations: tuple[Perturbation, ...] = ()
    seed: int = 0
    sampling: Sampling | None = None
    layout: PromptLayout = "plain"
    system_template: str | None = None

    @property
    def next_step(self) -> int:
        """The 1-based number of the step about to be taken."""
        return len(self.history) + 1

    def advance(self, result: StepResult) -> EpisodeState:
        """The state after ``result``: its action and observation appended to history."""
        return replace(self, history=(*self.history, result.turn()))


def history_from_terminal_triple(data: Mapping[str, Any]) -> tuple[Turn, ...]:
    """History of a terminal/swe triple (``history[{action, observation}]``)."""
    try:
        return tuple(Turn.from_dict(item) for item in data["history"])
    except (KeyError, TypeError) as exc:
        raise FormatError(f"not a terminal triple ({exc})", field="history") from exc


def history_from_tau_bench(data: Mapping[str, Any]) -> tuple[Turn, ...]:
    """mcp history from a tau-bench trajectory: each tool call and its result.

    An action is the call as ``{"name", "arguments"}`` JSON (arguments parsed
    from OpenAI's string form); its observation is the tool message answering
    it. Calls and results are paired in order, by ``tool_call_id`` among the
    calls still waiting (real trajectories reuse ids). Conversation turns with
    the user are not environment steps and are skipped.
    """
    messages = data.get("traj") or data.get("messages")
    if not isinstance(messages, list):
        raise FormatError("no 'traj' or 'messages' list", field="traj")
    waiting: list[tuple[str | None, str]] = []  # (call id, action) not yet answered
    turns = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                waiting.append((call.get("id"), _call_action(call.get("function", {}))))
        elif message.get("role") == "tool" and waiting:
            ids = [call_id for call_id, _ in waiting]
            position = (
                ids.index(message.get("tool_call_id")) if message.get("tool_call_id") in ids else 0
            )
            _, action = waiting.pop(position)
            turns.append(Turn(action, str(message.get("content") or "")))
    return tuple(turns)


# In a BrowserGym experiment log, each step's prompt has a "# Current page Accessibility
# Tree" section (a blank line, the tree, then two blank lines before the next "# "
# heading); the agent's answer follows " - INFO - action:" with the action in a fence.
_LOG_TREE = re.compile(
    r"^# Current page Accessibility Tree\n\n(.*?)\n\n\n# ", re.DOTALL | re.MULTILINE
)
_LOG_ACTION = re.compile(r" - INFO - action:\n.*?```(.*?)```", re.DOTALL)
_LOG_GOAL = re.compile(r"^# Goal\n\n(.*?)\n# ", re.DOTALL | re.MULTILINE)


def browsergym_log_trees(log: str) -> list[str]:
    """Every accessibility tree a BrowserGym experiment log shows the agent, step by step."""
    trees: list[str] = _LOG_TREE.findall(log)
    return trees


def browsergym_log_actions(log: str) -> list[str]:
    """The action the agent took after each tree of the log (``click("227")``, ...)."""
    return [action.strip() for action in _LOG_ACTION.findall(log)]


def browsergym_log_goal(log: str) -> str:
    """The task the agent was given (its first prompt's "# Goal"), or ``""``."""
    found = _LOG_GOAL.search(log)
    return found.group(1).strip() if found else ""


def history_from_browsergym_log(log: str) -> tuple[Turn, ...]:
    """web history from a BrowserGym log: each action and the tree the agent saw next.

    The first tree is the initial page, not an observation; an action whose
    result the log never shows (the run's last, usually ``send_msg_to_user``)
    is left out, as it has no real observation to compare against.
    """
    trees = browsergym_log_trees(log)
    if not trees:
        raise FormatError("no accessibility tree in the log", field="log")
    return tuple(
        Turn(action, tree)
        for action, tree in zip(browsergym_log_actions(log), trees[1:], strict=False)
    )


def _call_action(function: Mapping[str, Any]) -> str:
    arguments = function.get("arguments") or "{}"
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        parsed = arguments
    return json.dumps({"name": function.get("name", ""), "arguments": parsed}, ensure_ascii=False)
