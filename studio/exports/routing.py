from __future__ import annotations

from django.urls import path

from studio.exports.consumers import ExportProgressConsumer

websocket_urlpatterns = [
    path("ws/exports/<int:job_id>/", ExportProgressConsumer.as_asgi()),
]
