"""A pytest plugin (``-p studio.testing`` in pyproject.toml) that isolates test runs.

It must run before pytest-django reads the settings, which happens before any
conftest.py is imported: so the environment is prepared here, at import.
The pytest process runs the embedded configuration in a fresh temporary var/;
production mode is tested with real processes (tests/integration/stack.py).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

for _name in [name for name in os.environ if name.startswith("STUDIO_")]:
    del os.environ[_name]
os.environ["STUDIO_VAR_DIR"] = tempfile.mkdtemp(prefix="studio-test-var-")
# The converted embedded model is kept across runs: converting it takes ~15 s.
os.environ["STUDIO_MODEL_CACHE_DIR"] = str(ROOT / "var" / "models")
os.environ["HF_HUB_OFFLINE"] = "1"
# No background sweeper in the test process: tests call the sweep themselves.
os.environ["STUDIO_SWEEP_EVERY_S"] = "0"
# Nor a background model load: a test that wants one starts it (studio/core/preload.py).
os.environ["STUDIO_PRELOAD_MODEL"] = "0"
# API database calls see the test's transaction (studio/lib/db.py): it lives in the
# request's thread. The studio's own threads are covered by the live-server tests.
os.environ["STUDIO_DB_CALLS_IN_REQUEST_THREAD"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
