"""The Celery app. Reliability settings live in settings.py under ``CELERY_``.

Tasks are late-acknowledged and rejected when a worker dies, so a task may run
twice: every task claims its row with a conditional UPDATE before working.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")

app = Celery("studio")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
