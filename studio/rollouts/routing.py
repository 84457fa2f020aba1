from __future__ import annotations

from django.urls import path

from studio.rollouts.consumers import RolloutProgressConsumer

websocket_urlpatterns = [
    path("ws/rollouts/<int:job_id>/", RolloutProgressConsumer.as_asgi()),
]
