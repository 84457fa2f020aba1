"""The HTTP handler of the machine-facing API (/api/v1/..., /v1/...): Django's, without
the browser's middleware.

Why: sessions, CSRF, messages, authentication, clickjacking and common middleware are
sync middleware, and under ASGI Django runs each of their hooks in a thread of its own:
about a dozen thread switches per request. The API authenticates by token
(studio/api/http.py) and needs none of them; an RL trainer's step paid for them all.
Only SecurityMiddleware's checks and headers apply to the API. Its hooks are pure
functions of the request and response, so they run here on the event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.middleware.security import SecurityMiddleware

#: Paths this handler serves; everything else (the token pages under /api/tokens/
#: included) goes through the full stack.
API_PREFIXES = ("/api/v1/", "/v1/")

AsyncGetResponse = Callable[[HttpRequest], Awaitable[HttpResponseBase]]


def is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIXES)


def _security(get_response: AsyncGetResponse) -> AsyncGetResponse:
    """SecurityMiddleware's redirect to HTTPS and its headers, with no thread switch."""
    security = SecurityMiddleware(get_response)

    async def middleware(request: HttpRequest) -> HttpResponseBase:
        redirect = security.process_request(request)
        if redirect is not None:
            return redirect
        response = await get_response(request)
        # It only sets headers, which every response has (streaming ones too).
        return security.process_response(request, cast(HttpResponse, response))

    return middleware


class ApiHandler(ASGIHandler):
    async def __call__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[Mapping[str, Any]]],
        send: Callable[[Mapping[str, Any]], Awaitable[None]],
    ) -> None:
        """Django's, without the ``ThreadSensitiveContext`` it opens for every request.

        That context makes a thread (and a thread pool) per request for the request's
        thread-sensitive sync calls, and shuts it down after: a few per cent of the web
        process's CPU per env step. The API's database work runs in the database lane's
        own long-lived threads (studio/lib/db.py), so what is left thread-sensitive
        (closing the response) shares the process's one sync thread instead.
        """
        await self.handle(scope, receive, send)

    def load_middleware(self, is_async: bool = False) -> None:
        """What Django's loader builds for an empty ``MIDDLEWARE``, with :func:`_security`
        around the view (the attributes are Django's ``BaseHandler``'s, untyped in its stubs)."""
        handler: Any = self
        handler._view_middleware = []
        handler._template_response_middleware = []
        handler._exception_middleware = []
        view = cast(AsyncGetResponse, convert_exception_to_response(handler._get_response_async))
        handler._middleware_chain = convert_exception_to_response(_security(view))
