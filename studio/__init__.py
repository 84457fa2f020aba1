"""The World Studio Django project."""

from __future__ import annotations

from studio.celery import app as celery_app

__all__ = ["celery_app"]
