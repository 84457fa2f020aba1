from __future__ import annotations

from django.apps import AppConfig


class TracesConfig(AppConfig):
    name = "studio.traces"
    label = "traces"
    #: Entries this app adds to the top navigation: (label, url name).
    nav: list[tuple[str, str]] = [("Traces", "traces:list")]

    def ready(self) -> None:
        # Imported here, not at the top: the sweep reads models, which Django loads
        # only after every app's module has been imported.
        from studio.lib.sweep import register
        from studio.traces.sweep import sweep_simulations

        register(sweep_simulations)
