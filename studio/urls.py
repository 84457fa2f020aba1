"""URL routes: each app brings its own ``urls.py``, mounted under its label."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("studio.core.urls")),
    path("admin/", admin.site.urls),
    path("worlds/", include(("studio.worlds.urls", "worlds"))),
    path("episodes/", include(("studio.episodes.urls", "episodes"))),
    path("traces/", include(("studio.traces.urls", "traces"))),
    path("collections/", include(("studio.exports.urls", "exports"))),
    path("rollouts/", include(("studio.rollouts.urls", "rollouts"))),
    path("", include(("studio.api.urls", "api"))),
]
