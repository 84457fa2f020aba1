"""The HTTP handler of the machine-facing API (/api/v1/..., /v1/...): Django's, without
the browser's middleware.

Why: sessions, CSRF, messages, authentication, clickjacking and common middleware are
sync middleware, and under ASGI Django runs each of their hooks in a thread of its own:
about a dozen thread switches per request. The API authenticates by token
(studio/api/http.py) and needs none of them; an RL trainer's step paid for them all.
Only SecurityMiddleware's checks and headers apply to the API. Its hooks are pure
functions of the request and response, so they run here on the event loop.

The request signals are sent on the event loop too (:meth:`ApiHandler.handle`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.middleware.security import SecurityMiddleware
from django.urls import set_script_prefix

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
        own long-lived threads (studio/lib/db.py), and the request signals on the loop
        (:meth:`handle`), so nothing is left that needs a thread of the request's own.
        """
        await self.handle(scope, receive, send)

    async def handle(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[Mapping[str, Any]]],
        send: Callable[[Mapping[str, Any]], Awaitable[None]],
    ) -> None:
        """Django's ``ASGIHandler.handle``, with the request signals sent on the event loop.

        Django sends ``request_started``, and closes the response (which sends
        ``request_finished``), in the process's one sync thread: two thread trips per
        request, about 8 % of the web process's CPU per env step (docs/performance.md).
        The receivers close the database connections and caches of the thread they run
        in and reset DEBUG's query log and the URLconf. The API's database work runs in,
        and gives its connections back from, the database lane's threads
        (studio/lib/db.py), so on the loop they find nothing to close, and take
        microseconds. As in Django, a client that disconnects cancels the view.
        """
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        try:
            set_script_prefix(get_script_prefix(scope))
            signals.request_started.send(sender=self.__class__, scope=scope)
            request, error_response = self.create_request(scope, body_file)
            if request is None:
                refusal = cast(HttpResponseBase, error_response)  # create_request gives one
                await self.send_response(refusal, send)
                refusal.close()
                return
            answering = asyncio.create_task(self._answer(request, send))
            disconnected = asyncio.create_task(self.listen_for_disconnect(receive))
            await asyncio.wait((answering, disconnected), return_when=asyncio.FIRST_COMPLETED)
            for task in (disconnected, answering):
                task.cancel()  # nothing for a task that has finished
            await asyncio.wait((answering, disconnected))  # the view may handle its cancel
            problem = None if disconnected.cancelled() else disconnected.exception()
            if problem is not None and not isinstance(problem, RequestAborted):
                raise problem
            if answering.cancelled():
                signals.request_finished.send(sender=self.__class__)
            else:
                answering.result().close()  # sends request_finished
        finally:
            body_file.close()

    async def _answer(
        self, request: HttpRequest, send: Callable[[Mapping[str, Any]], Awaitable[None]]
    ) -> HttpResponseBase:
        response = await self.run_get_response(request)
        with contextlib.suppress(asyncio.CancelledError):  # the client left while it was sent
            await self.send_response(response, send)
        return response

    def load_middleware(self, is_async: bool = False) -> None:
        """What Django's loader builds for an empty ``MIDDLEWARE``, with :func:`_security`
        around the view (the attributes are Django's ``BaseHandler``'s, untyped in its stubs)."""
        handler: Any = self
        handler._view_middleware = []
        handler._template_response_middleware = []
        handler._exception_middleware = []
        view = cast(AsyncGetResponse, convert_exception_to_response(handler._get_response_async))
        handler._middleware_chain = convert_exception_to_response(_security(view))
