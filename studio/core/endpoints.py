"""The world-model endpoint the studio uses when a world or scenario names none."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    from simulator.backends import Backend


def default_endpoint_spec() -> dict[str, Any]:
    """The deployment's endpoint: STUDIO_MODEL_URL if set, else the embedded CPU model."""
    if settings.MODEL_URL:
        return {
            "kind": "openai",
            "base_url": settings.MODEL_URL,
            "model": settings.MODEL_NAME,
            "api_key": settings.MODEL_API_KEY,
        }
    return {"kind": "local", "cache_dir": str(settings.MODEL_CACHE_DIR)}


def describe_spec(spec: dict[str, Any]) -> str:
    """Where an endpoint points, without its API key."""
    if spec["kind"] == "openai":
        return f"{spec['base_url']} ({spec.get('model', '')})"
    if spec["kind"] == "local":
        return f"local: {spec.get('model_path') or 'embedded SmolLM2-135M-Instruct'}"
    return str(spec["kind"])


def default_backend() -> Backend:
    # Imported here so that starting Django never pays for the backends' imports.
    from simulator.backends import create_backend

    return create_backend(default_endpoint_spec())
