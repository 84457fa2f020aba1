"""The environment API (/api/v1/...): scenarios as Gymnasium-style environments over JSON.

Thin views: :mod:`studio.api.http` does auth, limits and errors; the episodes
services do the work. Viewers may read; stepping, creating and closing need an
editor role.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase

from simulator.errors import InvalidAction
from studio.api.completions import (
    completion_payload,
    parse_conversation,
    scenario_id_from_model,
    session_advance,
    session_resolve,
    sse_chunks,
)
from studio.api.envs import env_payload, initial_observation, scenario_payload, step_info
from studio.api.http import (
    MAX_ID,
    ApiError,
    AwaitStep,
    api_view,
    check_id,
    int_field,
    text_field,
)
from studio.api.models import ApiToken, CompletionSession
from studio.api.openapi import openapi_schema
from studio.api.selectors import env_get_for, scenario_get_for, scenario_list_for
from studio.api.services import env_create, env_step_finish
from studio.episodes.models import Episode, Step, StepStatus
from studio.episodes.services import episode_close, step_submit, step_wait


@contextmanager
def episode_errors() -> Iterator[None]:
    """A bad action as a 422 API error. The episodes service's own refusals are
    StudioErrors (EpisodeBusy: 409 ``episode_busy``, EpisodeClosed: 409
    ``episode_closed``), which :mod:`studio.api.http` answers by their status and code."""
    try:
        yield
    except InvalidAction as exc:
        raise ApiError(422, "invalid_action", str(exc)) from None


def _check_finished(step: Step) -> None:
    if step.status == StepStatus.FAILED:
        raise ApiError(502, "world_model_error", step.error or "The world model failed")
    if step.status != StepStatus.DONE:
        raise ApiError(504, "step_timeout", f"Step {step.index} is still {step.status}")


@api_view("GET", auth=False)
def openapi(request: HttpRequest, token: None, body: None) -> JsonResponse:
    return JsonResponse(openapi_schema(request.build_absolute_uri("/")))


@api_view("GET")
def scenarios(request: HttpRequest, token: ApiToken, body: None) -> JsonResponse:
    items = [scenario_payload(s) for s in scenario_list_for(user=token.user)]
    return JsonResponse({"scenarios": items})


@api_view("POST")
def envs(request: HttpRequest, token: ApiToken, body: dict[str, Any]) -> JsonResponse:
    scenario_id = int_field(body, "scenario", low=1, high=MAX_ID)
    seed = int_field(body, "seed", required=False)
    assert scenario_id is not None
    scenario = scenario_get_for(user=token.user, scenario_id=scenario_id, edit=True)
    episode = env_create(user=token.user, scenario=scenario, seed=seed)
    info = {
        "episode_id": episode.pk,
        "scenario": scenario.pk,
        "domain": episode.domain,
        "task": episode.task,
        "seed": episode.seed,
        "max_steps": scenario_payload(scenario)["max_steps"],
        "step": 0,
    }
    payload = {"id": episode.pk, "observation": initial_observation(episode), "info": info}
    return JsonResponse(payload, status=201)


@api_view("GET")
def env_detail(request: HttpRequest, token: ApiToken, body: None, env_id: int) -> JsonResponse:
    episode = env_get_for(user=token.user, env_id=check_id(env_id))
    return JsonResponse(env_payload(episode))


@api_view("POST", episode_arg="env_id")
def env_step_view(
    request: HttpRequest, token: ApiToken, body: dict[str, Any], env_id: int
) -> AwaitStep:
    episode = env_get_for(user=token.user, env_id=check_id(env_id), edit=True)
    action = text_field(body, "action")
    with episode_errors():
        step = step_submit(episode=episode, action=action, user=token.user)

    def respond(step: Step) -> JsonResponse:
        _check_finished(step)
        outcome = env_step_finish(episode=episode, step=step)
        return JsonResponse(
            {
                "observation": step.observation,
                "reward": outcome.reward,
                "terminated": outcome.terminated,
                "truncated": outcome.truncated,
                "info": step_info(step, outcome),
            }
        )

    return AwaitStep(
        step.pk, settings.API_STEP_TIMEOUT, respond, Episode.step_ends_group_for(episode.pk)
    )


@api_view("POST")
def env_close(
    request: HttpRequest, token: ApiToken, body: dict[str, Any], env_id: int
) -> JsonResponse:
    episode = env_get_for(user=token.user, env_id=check_id(env_id), edit=True)
    episode_close(episode=episode)
    episode.refresh_from_db()
    return JsonResponse({"id": episode.pk, "status": episode.status})


@api_view("GET")
def models(request: HttpRequest, token: ApiToken, body: None) -> JsonResponse:
    data = [
        {
            "id": f"scenario-{s.pk}",
            "object": "model",
            "created": int(s.created_at.timestamp()),
            "owned_by": s.project.slug,
            "title": s.title,
        }
        for s in scenario_list_for(user=token.user)
    ]
    return JsonResponse({"object": "list", "data": data})


def _session_name(body: dict[str, Any]) -> str:
    metadata = body.get("metadata")
    name = body.get("user")
    if name is None and isinstance(metadata, dict):
        name = metadata.get("session")
    if name is None:
        return ""
    if not isinstance(name, str) or len(name) > 200:
        raise ApiError(400, "invalid_request", "user: must be text of at most 200 characters")
    return name


@api_view("POST")
def chat_completions(
    request: HttpRequest, token: ApiToken, body: dict[str, Any]
) -> HttpResponseBase | AwaitStep:
    model = text_field(body, "model")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise ApiError(400, "invalid_request", "stream: must be true or false")
    turns, action = parse_conversation(body.get("messages"))
    user_key = _session_name(body)
    scenario_id = check_id(scenario_id_from_model(model))
    scenario = scenario_get_for(user=token.user, scenario_id=scenario_id, edit=True)
    session = session_resolve(user=token.user, scenario=scenario, turns=turns, user_key=user_key)
    with episode_errors():
        step = step_submit(episode=session.episode, action=action, user=token.user)
    if stream:
        events = _stream_completion(model, session.pk, step.pk, settings.API_STEP_TIMEOUT)
        response = StreamingHttpResponse(events, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        return response

    def respond(step: Step) -> JsonResponse:
        _check_finished(step)
        return JsonResponse(_complete(model, session, step))

    return AwaitStep(
        step.pk,
        settings.API_STEP_TIMEOUT,
        respond,
        Episode.step_ends_group_for(session.episode_id),
    )


def _complete(model: str, session: CompletionSession, step: Step) -> dict[str, Any]:
    outcome = env_step_finish(episode=session.episode, step=step)
    session_advance(session=session, step=step)
    return completion_payload(model=model, step=step, outcome=outcome, episode=session.episode)


def _finish_for_stream(model: str, session_id: int, step_id: int) -> dict[str, Any]:
    step = Step.objects.get(pk=step_id)
    session = CompletionSession.objects.select_related("episode__scenario").get(pk=session_id)
    try:
        _check_finished(step)
    except ApiError as exc:
        return {"error": {"code": exc.code, "message": exc.message}}
    return _complete(model, session, step)


async def _stream_completion(
    model: str, session_id: int, step_id: int, timeout: float
) -> AsyncIterator[bytes]:
    """SSE: keep-alive comments while the step runs, then the observation in chunks.

    The observation is sent only once the step is done, because enforced
    perturbations may rewrite the model's text after it finishes: the agent must
    get exactly what the episode records (its next request has to repeat it).
    """
    waiting = asyncio.ensure_future(step_wait(step_id, timeout))
    while True:
        done, _ = await asyncio.wait({waiting}, timeout=5)
        if done:
            break
        yield b": waiting for the world model\n\n"
    if waiting.exception() is not None and not isinstance(waiting.exception(), TimeoutError):
        raise waiting.exception()  # type: ignore[misc]
    payload = await sync_to_async(_finish_for_stream)(model, session_id, step_id)
    if "error" in payload:
        yield f"data: {json.dumps(payload)}\n\n".encode()
        return
    for event in sse_chunks(payload):
        yield event
