from __future__ import annotations

from django.apps import apps
from django.conf import settings
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse


def studio(request: HttpRequest) -> dict[str, object]:
    """The studio mode and the top navigation, collected from each app's ``nav``."""
    items: list[tuple[str, str]] = []
    for config in apps.get_app_configs():
        for label, url_name in getattr(config, "nav", []):
            try:
                items.append((label, reverse(url_name)))
            except NoReverseMatch:
                continue  # an app that lists a page it does not serve yet
    return {"studio_mode": settings.MODE, "nav_items": items}
