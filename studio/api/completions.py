"""The world model as an OpenAI-compatible chat endpoint (``POST /v1/chat/completions``).

The model name picks a scenario (``scenario-<id>``). The request's last user
message is the agent's action; the user/assistant turns before it must be the
episode so far: each user turn an action, each assistant turn the observation
the studio returned for it. System messages are ignored (the scenario's world
prompt is used). Which episode a request continues:

* with a ``user`` field (or ``metadata.session``): the latest session of that
  name for this token's user and scenario; its prior turns must match;
* without: the episode whose conversation so far hashes to the request's prior
  turns (the *prefix hash*). A request with no prior turns starts a new episode.

Every call is one step of a normal episode (source ``completions``): visible
live in the studio, reviewable, exportable.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User

from studio.api.http import ApiError, clean_text
from studio.api.models import CompletionSession
from studio.episodes.models import Episode, EpisodeSource, EpisodeStatus, Step, StepStatus
from studio.episodes.rewards import Outcome
from studio.episodes.services import episode_create
from studio.worlds.models import Scenario

Turn = tuple[str, str]
MODEL_PREFIX = "scenario-"


def scenario_id_from_model(model: str) -> int:
    suffix = model.removeprefix(MODEL_PREFIX)
    if not model.startswith(MODEL_PREFIX) or not suffix.isdigit() or len(suffix) > 18:
        raise ApiError(404, "model_not_found", f"Unknown model {model[:80]!r}; see GET /v1/models")
    return int(suffix)


def parse_conversation(messages: Any) -> tuple[list[Turn], str]:
    """(prior turns as (action, observation) pairs, the current action)."""
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "invalid_request", "messages: required non-empty list")
    convo: list[tuple[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ApiError(400, "invalid_request", f"messages[{i}]: must be an object")
        role, content = message.get("role"), message.get("content")
        if role not in {"system", "user", "assistant"}:
            raise ApiError(400, "invalid_request", f"messages[{i}].role: system, user or assistant")
        if not isinstance(content, str):
            raise ApiError(400, "invalid_request", f"messages[{i}].content: must be text")
        if role != "system":
            convo.append((role, clean_text(content, f"messages[{i}].content")))
    if not convo or convo[-1][0] != "user":
        raise ApiError(400, "invalid_request", "the last message must be the agent's action (user)")
    prior, action = convo[:-1], convo[-1][1]
    turns: list[Turn] = []
    for i in range(0, len(prior), 2):
        pair = prior[i : i + 2]
        if len(pair) != 2 or pair[0][0] != "user" or pair[1][0] != "assistant":
            raise ApiError(400, "invalid_request", "earlier turns must alternate user, assistant")
        turns.append((pair[0][1], pair[1][1]))
    return turns, action


def prefix_hash(user_id: int, scenario_id: int, turns: Sequence[Turn]) -> str:
    data = json.dumps([user_id, scenario_id, [list(t) for t in turns]], ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()


def episode_turns(episode: Episode) -> list[Turn]:
    steps = episode.steps.filter(status=StepStatus.DONE).order_by("index")
    return [(s.action, s.observation) for s in steps]


def session_resolve(
    *, user: User, scenario: Scenario, turns: list[Turn], user_key: str
) -> CompletionSession:
    """The session (and episode) this request continues, or a new one when it has no prior turns."""
    sessions = CompletionSession.objects.select_related("episode").filter(
        token_user=user, scenario=scenario
    )
    if user_key:
        session = sessions.filter(user_key=user_key).order_by("-updated_at", "-pk").first()
        if session is not None and turns and episode_turns(session.episode) == turns:
            return session
    elif turns:
        digest = prefix_hash(user.pk, scenario.pk, turns)
        session = sessions.filter(user_key="", prefix_hash=digest).order_by("-updated_at").first()
        if session is not None:
            return session
    if turns:
        raise ApiError(
            409,
            "conversation_mismatch",
            "The earlier turns do not match any episode of this scenario; start again with "
            "only the first action, or send the session's `user` name",
        )
    return _session_start(user=user, scenario=scenario, user_key=user_key)


def _session_start(*, user: User, scenario: Scenario, user_key: str) -> CompletionSession:
    episode = episode_create(
        project=scenario.project,
        user=user,
        scenario=scenario,
        seed=int(scenario.spec.get("seed", 0) or 0),
        source=EpisodeSource.COMPLETIONS,
        title=f"Chat: {scenario.title}"[:200],
    )
    return CompletionSession.objects.create(
        token_user=user,
        scenario=scenario,
        episode=episode,
        user_key=user_key,
        prefix_hash=prefix_hash(user.pk, scenario.pk, []),
    )


def session_advance(*, session: CompletionSession, step: Step) -> None:
    """Remember the conversation as it stands after ``step``."""
    turns = episode_turns(session.episode)
    session.prefix_hash = prefix_hash(session.token_user_id, session.scenario_id, turns)
    session.save(update_fields=["prefix_hash", "updated_at"])


def completion_payload(
    *, model: str, step: Step, outcome: Outcome, episode: Episode
) -> dict[str, Any]:
    telemetry = step.telemetry or {}
    prompt = int(telemetry.get("prompt_tokens", 0) or 0)
    completion = int(telemetry.get("completion_tokens", 0) or 0)
    return {
        "id": f"chatcmpl-ws-{step.pk}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": step.observation},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "world_studio": world_studio_extra(step, outcome, episode),
    }


def world_studio_extra(step: Step, outcome: Outcome, episode: Episode) -> dict[str, Any]:
    return {
        "episode_id": episode.pk,
        "step": step.index,
        "reward": outcome.reward,
        "terminated": outcome.terminated,
        "truncated": outcome.truncated,
        "episode_status": EpisodeStatus.CLOSED
        if outcome.terminated or outcome.truncated
        else episode.status,
        "firings": step.firings,
        "verifiers": step.verifiers,
    }


def sse_chunks(payload: dict[str, Any], piece_chars: int = 64) -> list[bytes]:
    """The completion as OpenAI's SSE chunks: role, content pieces, finish, [DONE]."""
    content = payload["choices"][0]["message"]["content"]
    base = {k: payload[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps(base | {'choices': [choice]} | extra)}\n\n".encode()

    events = [event({"role": "assistant", "content": ""})]
    events += [
        event({"content": content[i : i + piece_chars]})
        for i in range(0, len(content), piece_chars)
    ]
    events.append(event({}, "stop", usage=payload["usage"], world_studio=payload["world_studio"]))
    events.append(b"data: [DONE]\n\n")
    return events
