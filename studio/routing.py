"""WebSocket routes, collected from each app's ``routing.py``."""

from __future__ import annotations

from studio.core import routing as core
from studio.episodes import routing as episodes
from studio.exports import routing as exports
from studio.rollouts import routing as rollouts
from studio.traces import routing as traces

websocket_urlpatterns = [
    *core.websocket_urlpatterns,
    *episodes.websocket_urlpatterns,
    *traces.websocket_urlpatterns,
    *exports.websocket_urlpatterns,
    *rollouts.websocket_urlpatterns,
]
