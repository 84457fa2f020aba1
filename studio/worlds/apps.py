from __future__ import annotations

from django.apps import AppConfig


class WorldsConfig(AppConfig):
    name = "studio.worlds"
    label = "worlds"
    #: Entries this app adds to the top navigation: (label, url name).
    nav: list[tuple[str, str]] = [("Worlds", "worlds:list"), ("Scenarios", "worlds:scenario-list")]
