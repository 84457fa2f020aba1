"""Build a backend from a plain mapping, as the studio stores endpoint records."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from simulator.backends.base import Backend

_FIELDS = {
    "openai": {
        "base_url",
        "model",
        "api_key",
        "timeout",
        "connect_timeout",
        "max_retries",
        "backoff",
        "sglang_extras",
    },
    "local": {"model_path", "cache_dir", "device", "dtype"},
    "replay": {"observations", "path", "episode_id", "reasoning", "chunk_size"},
    "scripted": {"outputs", "reasoning", "tokens_per_s", "latency_s", "chunk_size"},
}


def create_backend(spec: Mapping[str, Any]) -> Backend:
    """Make the backend ``spec["kind"]`` names, with the rest of ``spec`` as its settings.

    Kinds and their keys: ``openai`` (``base_url``, ``model``, ``api_key``, ``timeout``,
    ``connect_timeout``, ``max_retries``, ``backoff``, ``sglang_extras``); ``local``
    (``model_path``, default the embedded SmolLM2, which gets the small-model tuning;
    ``cache_dir``, ``device``, ``dtype``);
    ``replay`` (``observations`` or a JSONL ``path`` with ``episode_id``; ``reasoning``,
    ``chunk_size``); ``scripted`` (``outputs``, ``reasoning``, ``tokens_per_s``,
    ``latency_s``, ``chunk_size``). Unknown kinds or keys raise ValueError, so a typo in
    a stored record fails loudly instead of being ignored.
    """
    settings = dict(spec)
    kind = settings.pop("kind", None)
    if kind not in _FIELDS:
        raise ValueError(f"unknown backend kind {kind!r}; expected one of {sorted(_FIELDS)}")
    unknown = sorted(set(settings) - _FIELDS[kind])
    if unknown:
        raise ValueError(f"unknown {kind} backend settings: {', '.join(unknown)}")
    return _BUILDERS[kind](settings)


def _openai(settings: dict[str, Any]) -> Backend:
    from simulator.backends.openai_http import OpenAIBackend

    missing = sorted({"base_url", "model"} - set(settings))
    if missing:
        raise ValueError(f"openai backend needs {', '.join(missing)}")
    return OpenAIBackend(**settings)


def _local(settings: dict[str, Any]) -> Backend:
    from simulator.backends.local import EMBEDDED_TUNING, LocalBackend, embedded_model_path

    if settings.get("cache_dir") is not None:
        settings["cache_dir"] = Path(settings["cache_dir"])
    model_path = settings.pop("model_path", None)
    if not model_path:
        return LocalBackend(embedded_model_path(), tuning=EMBEDDED_TUNING, **settings)
    return LocalBackend(model_path, **settings)


def _replay(settings: dict[str, Any]) -> Backend:
    from simulator.backends.replay import ReplayBackend

    path = settings.pop("path", None)
    episode_id = settings.pop("episode_id", None)
    if path is not None:
        if "observations" in settings or "reasoning" in settings:
            raise ValueError("replay takes either path or observations, not both")
        return ReplayBackend.from_jsonl(path, episode_id=episode_id, **settings)
    if "observations" not in settings:
        raise ValueError("replay backend needs observations or path")
    return ReplayBackend(**settings)


def _scripted(settings: dict[str, Any]) -> Backend:
    from simulator.backends.scripted import ScriptedBackend

    if "outputs" not in settings:
        raise ValueError("scripted backend needs outputs")
    return ScriptedBackend(**settings)


_BUILDERS: dict[str, Callable[[dict[str, Any]], Backend]] = {
    "openai": _openai,
    "local": _local,
    "replay": _replay,
    "scripted": _scripted,
}
