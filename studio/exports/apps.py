from __future__ import annotations

from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "studio.exports"
    label = "exports"
    #: Entries this app adds to the top navigation: (label, url name).
    nav: list[tuple[str, str]] = [("Collections", "exports:list")]
