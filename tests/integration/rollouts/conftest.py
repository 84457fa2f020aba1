from __future__ import annotations

from tests.integration.api.conftest import model_server, world_model

__all__ = ["model_server", "world_model"]
