from __future__ import annotations

from django.apps import AppConfig

from studio.lib.sweep import register


class EpisodesConfig(AppConfig):
    name = "studio.episodes"
    label = "episodes"
    #: Entries this app adds to the top navigation: (label, url name).
    nav: list[tuple[str, str]] = [("Episodes", "episodes:list")]

    def ready(self) -> None:
        # Here, not at the top: the sweep reads models, which load after apps.py.
        from studio.episodes.sweep import sweep_steps

        register(sweep_steps)
