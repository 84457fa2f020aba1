"""ASGI entry point: HTTP through Django, WebSockets through Channels.

The machine-facing API's paths take a lean handler without the browser's middleware
(studio/api/handler.py); every other path takes the full one.

WebSockets pass an Origin check against ALLOWED_HOSTS (a page on another origin
cannot open a socket with the user's cookies) and carry the session user; each
consumer refuses anonymous users itself.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
django_http = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from studio.api.handler import ApiHandler, is_api_path  # noqa: E402
from studio.core.preload import start_model_preload  # noqa: E402
from studio.lib.sweep import start_sweeper  # noqa: E402
from studio.routing import websocket_urlpatterns  # noqa: E402

if settings.TASK_RUNNER == "inprocess":
    # Embedded mode: the tasks of a studio stopped mid-step are gone with it.
    start_sweeper()
    if settings.PRELOAD_MODEL:
        start_model_preload()

web_http = ASGIStaticFilesHandler(django_http) if settings.SERVE_STATIC else django_http
api_http = ApiHandler()


async def http(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The API's paths to its lean handler (studio/api/handler.py), the rest to the site's."""
    app = api_http if is_api_path(scope["path"]) else web_http
    await app(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": http,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
