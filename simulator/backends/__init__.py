"""World-model backends: one streaming protocol, several ways to answer it.

``openai`` (SGLang, vLLM, hosted APIs over HTTP), ``local`` (transformers in this
process), ``replay`` (a recorded trace) and ``scripted`` (given outputs, for tests).
Build one from a stored record with :func:`create_backend`. Importing this package
never imports torch or transformers; the local backend does so when it loads.
"""

from __future__ import annotations

from simulator.backends.base import Backend, Chunk, ChunkKind, Health, ModelRequest
from simulator.backends.factory import create_backend
from simulator.backends.local import LocalBackend, embedded_model_path
from simulator.backends.openai_http import OpenAIBackend
from simulator.backends.replay import ReplayBackend
from simulator.backends.scripted import ScriptedBackend

__all__ = [
    "Backend",
    "Chunk",
    "ChunkKind",
    "Health",
    "LocalBackend",
    "ModelRequest",
    "OpenAIBackend",
    "ReplayBackend",
    "ScriptedBackend",
    "create_backend",
    "embedded_model_path",
]
