from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.stack import Stack, production_stack


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest) -> Iterator[Stack]:
    """One production-mode studio (Postgres, Redis, a Celery worker, uvicorn) per module."""
    from tests.conftest import require_service

    require_service("PostgreSQL", 5432)
    require_service("Redis", 6379)
    with production_stack(workers=1) as running:
        yield running
