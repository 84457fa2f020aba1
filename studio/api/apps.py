from __future__ import annotations

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "studio.api"
    label = "api"
    #: Entries this app adds to the top navigation: (label, url name).
    nav: list[tuple[str, str]] = [("API", "api:tokens")]
