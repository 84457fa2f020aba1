from __future__ import annotations

from django.apps import AppConfig


class EpisodesConfig(AppConfig):
    name = "studio.episodes"
    label = "episodes"
    #: Entries this app adds to the top navigation: (label, url name).
    nav: list[tuple[str, str]] = [("Episodes", "episodes:list")]

    def ready(self) -> None:
        from studio.episodes.sweep import sweep_steps
        from studio.lib.sweep import register

        register(sweep_steps)
