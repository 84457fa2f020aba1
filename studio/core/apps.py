from __future__ import annotations

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "studio.core"
    label = "core"
    #: Entries this app adds to the top navigation: (label, url name).
    nav: list[tuple[str, str]] = [("Projects", "project-list")]
