"""A scratch embedded studio for the benchmarks that run Django in their own process.

Why: a benchmark must not read the caller's ``STUDIO_*`` settings (a production
database, a Redis it would fill) nor write to the project's var/; each starts from the
embedded defaults in a temporary var/ of its own. run_all.py skips modules whose name
starts with ``_``, so this one is imported, never run.
"""

from __future__ import annotations

import os
import tempfile


def setup_scratch_studio(prefix: str) -> None:
    """Django set up on the embedded defaults, with a fresh temporary var/ (``prefix``).

    Call it before importing anything of the studio (the project root on ``sys.path``)."""
    for name in [n for n in os.environ if n.startswith("STUDIO_")]:
        del os.environ[name]
    os.environ["STUDIO_VAR_DIR"] = tempfile.mkdtemp(prefix=prefix)
    os.environ["DJANGO_SETTINGS_MODULE"] = "studio.settings"

    import django

    django.setup()
