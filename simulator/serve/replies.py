"""What the protocol test server answers when no recording is given.

A deterministic observation derived from the request's last user message, so a
whole episode runs against the server and the same request always gets the same
answer. A JSON action (a tool call, an action list) gets a JSON result echoing
it; any other action gets terminal-style text echoing it.
"""

from __future__ import annotations

import json
import re

from simulator.backends._text import wrap_observation
from simulator.types import Message

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def last_action(messages: list[Message]) -> str:
    """The action text of the last user message: after ``**Action:**`` if present, unfenced."""
    text = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    if "**Action:**" in text:
        text = text.split("**Action:**", 1)[1].split("\n\nPlease analyze", 1)[0]
    fenced = _FENCE.search(text)
    return (fenced.group(1) if fenced else text).strip()


def scripted_observation(messages: list[Message]) -> str:
    """The default answer for ``messages``, wrapped in ``<predicted_observation>``."""
    action = last_action(messages)
    try:
        parsed = json.loads(action)
    except json.JSONDecodeError:
        return wrap_observation(f"$ {action}\n(simulated) ok\n$ ")
    return wrap_observation(json.dumps({"ok": True, "echo": parsed}, ensure_ascii=False))


def scripted_reasoning(messages: list[Message]) -> str:
    """Reasoning text for ``--reasoning``: short, deterministic, about the request."""
    return f"The agent acted at turn {sum(m['role'] == 'user' for m in messages)}; echo it back."
