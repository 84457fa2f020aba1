from __future__ import annotations

from django.urls import path

from studio.traces.consumers import ImportProgressConsumer, SimulationProgressConsumer

websocket_urlpatterns = [
    path("ws/traces/imports/<int:pk>/", ImportProgressConsumer.as_asgi()),
    path("ws/traces/simulations/<int:pk>/", SimulationProgressConsumer.as_asgi()),
]
