"""The API's request handling: token auth, size and rate limits, JSON in, JSON errors out.

Every error is ``{"error": {"code", "message"}}`` with a 4xx status for anything
the client can fix; a view raises :class:`ApiError` (or Django's Http404 /
PermissionDenied, translated here) and never returns HTML.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial, wraps
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import OperationalError
from django.http import Http404, HttpRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt

from studio.api.models import ApiToken
from studio.api.ratelimit import rate_limit_take
from studio.api.services import token_authenticate
from studio.api.tokens import bearer_token
from studio.episodes.models import Episode, Step
from studio.episodes.services import step_wait
from studio.errors import StudioError
from studio.lib.db import Priority, db_call
from studio.lib.inbox import Inbox, listening

MAX_ID = 2**63 - 1
#: Seconds a client is told to wait when the database pool is exhausted.
OVERLOAD_RETRY_AFTER_S = 1
#: Tries at answering for a step that has already run.
FINISH_ATTEMPTS = 5
MIN_INT32, MAX_INT32 = -(2**31), 2**31 - 1

ApiView = Callable[..., "HttpResponseBase | AwaitStep"]


@dataclass(frozen=True)
class AwaitStep:
    """What a view returns to answer only once a step has finished.

    The wait happens on the event loop, not in a thread: Django runs sync views in
    one shared thread, so a view that blocked until the world model answered would
    hold up every other request meanwhile.
    """

    step_id: int
    timeout: float
    then: Callable[[Step], HttpResponseBase]
    #: The episode's step-ends group (:meth:`Episode.step_ends_group_for`), where the
    #: step's final message arrives.
    group: str = ""


class ApiError(StudioError):
    """A refusal the API answers with its own JSON error ``code`` and HTTP ``status``."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}

    def response(self) -> JsonResponse:
        return error_response(self.status, self.code, self.message, self.headers)


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JsonResponse:
    response = JsonResponse({"error": {"code": code, "message": message}}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def api_view(*methods: str, auth: bool = True, episode_arg: str = "") -> Callable[[ApiView], Any]:
    """Wrap ``view(request, token, body, **kwargs)``: ``token`` is None when ``auth`` is False,
    ``body`` the parsed JSON object of a POST (else None).

    ``episode_arg`` names the path argument that is the episode a returned
    :class:`AwaitStep` waits on: the wrapper then listens to its step-ends group before the view
    runs, so the wait needs no read of the step to catch an end it could have missed.
    """

    def decorate(view: ApiView) -> Any:
        def start(request: HttpRequest, **kwargs: Any) -> HttpResponseBase | AwaitStep:
            if request.method not in methods:
                raise ApiError(
                    405,
                    "method_not_allowed",
                    f"{request.method} is not allowed here",
                    {"Allow": ", ".join(methods)},
                )
            _check_size(request)
            token = _authenticate(request) if auth else None
            body = _json_body(request) if request.method == "POST" else None
            return view(request, token, body, **kwargs)

        @csrf_exempt
        @wraps(view)
        async def wrapper(request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
            if not episode_arg:
                return await _respond(partial(start, **kwargs), request, None)
            async with listening(Episode.step_ends_group_for(kwargs[episode_arg])) as inbox:
                return await _respond(partial(start, **kwargs), request, inbox)

        return wrapper

    return decorate


async def _respond(
    start: Callable[[HttpRequest], HttpResponseBase | AwaitStep],
    request: HttpRequest,
    inbox: Inbox | None,
) -> HttpResponseBase:
    """The view's answer, or, for an :class:`AwaitStep`, the answer once its step has ended."""
    result: HttpResponseBase | AwaitStep = await db_call(
        _or_unavailable(_as_json_errors(start)), request
    )
    if not isinstance(result, AwaitStep):
        return result
    step = await step_wait(result.step_id, result.timeout, group=result.group, inbox=inbox)
    return await _finish(result, step)


async def _finish(result: AwaitStep, step: Step) -> HttpResponseBase:
    """The answer for a finished step, waiting out a busy pool rather than failing fast.

    The step has run: a 503 here would make a client send its action again, so
    this waits for a connection several times before it gives up.
    """
    for _ in range(FINISH_ATTEMPTS - 1):
        try:
            response: HttpResponseBase = await db_call(
                _as_json_errors(result.then), step, priority=Priority.FINISH
            )
            return response
        except OperationalError:
            await asyncio.sleep(OVERLOAD_RETRY_AFTER_S)
    last: HttpResponseBase = await db_call(
        _or_unavailable(_as_json_errors(result.then)), step, priority=Priority.FINISH
    )
    return last


def _overloaded() -> JsonResponse:
    return error_response(
        503,
        "overloaded",
        "The studio is busy (no database connection is free); retry shortly",
        {"Retry-After": str(OVERLOAD_RETRY_AFTER_S)},
    )


def _or_unavailable(call: Callable[..., Any]) -> Callable[..., Any]:
    """``call``, answering 503 with ``Retry-After`` when no database connection is free."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except OperationalError:
            return _overloaded()

    return run


def _as_json_errors(call: Callable[..., Any]) -> Callable[..., Any]:
    """``call`` with the errors a view may raise turned into JSON error responses."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except ApiError as exc:
            return exc.response()
        except StudioError as exc:  # a service's refusal that the view left as it was
            return error_response(exc.status, exc.code, str(exc))
        except Http404:
            return error_response(404, "not_found", "No such object")
        except PermissionDenied as exc:
            return error_response(403, "forbidden", str(exc) or "Not allowed")
        except RequestDataTooBig:
            return _too_big()

    return run


def _too_big() -> JsonResponse:
    limit = settings.API_MAX_REQUEST_BYTES
    return error_response(413, "request_too_large", f"The request body is over {limit} bytes")


def _check_size(request: HttpRequest) -> None:
    length = request.META.get("CONTENT_LENGTH") or "0"
    try:
        size = int(length)
    except ValueError:
        raise ApiError(400, "invalid_request", "Content-Length is not a number") from None
    if size > settings.API_MAX_REQUEST_BYTES:
        raise ApiError(
            413,
            "request_too_large",
            f"The request body is over {settings.API_MAX_REQUEST_BYTES} bytes",
        )


def _authenticate(request: HttpRequest) -> ApiToken:
    clear = bearer_token(request.headers.get("Authorization", ""))
    challenge = {"WWW-Authenticate": 'Bearer realm="world-studio"'}
    if clear is None:
        raise ApiError(401, "unauthenticated", "Send Authorization: Bearer <token>", challenge)
    token = token_authenticate(clear=clear)
    if token is None:
        raise ApiError(401, "invalid_token", "The token is unknown or revoked", challenge)
    wait = rate_limit_take(f"token-{token.pk}")
    if wait > 0:
        raise ApiError(
            429,
            "rate_limited",
            f"Too many requests for this token; retry in {wait:.2f} s",
            {"Retry-After": str(max(1, math.ceil(wait)))},
        )
    return token


def _json_body(request: HttpRequest) -> dict[str, Any]:
    raw = request.body
    if len(raw) > settings.API_MAX_REQUEST_BYTES:
        raise ApiError(
            413,
            "request_too_large",
            f"The request body is over {settings.API_MAX_REQUEST_BYTES} bytes",
        )
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "invalid_json", "The request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_request", "The request body must be a JSON object")
    return body


# Field readers: each raises a 400 (or 422 for a well-formed but unusable value) naming the field.


def text_field(body: dict[str, Any], name: str, *, required: bool = True, default: str = "") -> str:
    value = body.get(name)
    if value is None:
        if required:
            raise ApiError(400, "invalid_request", f"{name}: required text")
        return default
    if not isinstance(value, str):
        raise ApiError(400, "invalid_request", f"{name}: must be text")
    return clean_text(value, name)


def clean_text(value: str, name: str) -> str:
    """Text the database can store: no NUL characters, no lone surrogates."""
    if "\x00" in value:
        raise ApiError(400, "invalid_request", f"{name}: must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(400, "invalid_request", f"{name}: is not valid Unicode text") from None
    return value


def int_field(
    body: dict[str, Any],
    name: str,
    *,
    required: bool = True,
    default: int | None = None,
    low: int = MIN_INT32,
    high: int = MAX_INT32,
) -> int | None:
    value = body.get(name)
    if value is None:
        if required:
            raise ApiError(400, "invalid_request", f"{name}: required integer")
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(400, "invalid_request", f"{name}: must be an integer")
    if not low <= value <= high:
        raise ApiError(400, "invalid_request", f"{name}: must be between {low} and {high}")
    return value


def check_id(value: int) -> int:
    """A path id the database can look up; anything out of range is simply not found."""
    if not 1 <= value <= MAX_ID:
        raise Http404("No such object")
    return value
