from __future__ import annotations

from django.apps import AppConfig


class RolloutsConfig(AppConfig):
    name = "studio.rollouts"
    label = "rollouts"
    #: Entries this app adds to the top navigation: (label, url name).
    nav: list[tuple[str, str]] = [("Rollouts", "rollouts:list")]

    def ready(self) -> None:
        from studio.lib.sweep import register
        from studio.rollouts.sweep import sweep_rollouts

        register(sweep_rollouts)
