from __future__ import annotations

from django.urls import path

from studio.episodes.consumers import EpisodeConsumer

websocket_urlpatterns = [path("ws/episodes/<int:episode_id>/", EpisodeConsumer.as_asgi())]
