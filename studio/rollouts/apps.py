from __future__ import annotations

from django.apps import AppConfig

from studio.lib.sweep import register


class RolloutsConfig(AppConfig):
    name = "studio.rollouts"
    label = "rollouts"
    #: Entries this app adds to the top navigation: (label, url name).
    nav: list[tuple[str, str]] = [("Rollouts", "rollouts:list")]

    def ready(self) -> None:
        # Here, not at the top: the sweep reads models, which load after apps.py.
        from studio.rollouts.sweep import sweep_rollouts

        register(sweep_rollouts)
