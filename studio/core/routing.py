from __future__ import annotations

from django.urls import path

from studio.core.consumers import StatusConsumer

websocket_urlpatterns = [path("ws/status/", StatusConsumer.as_asgi())]
