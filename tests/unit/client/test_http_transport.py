"""The aiohttp wire under the studio's httpx clients."""

from __future__ import annotations

import asyncio

import uvicorn

from simulator.http_transport import AiohttpTransport


def test_an_idle_connection_is_dropped_before_uvicorn_would_close_it() -> None:
    """Else a request can go out on a connection the server is closing just then."""

    async def idle_keepalive() -> float:
        transport = AiohttpTransport()
        try:
            connector = transport._client().connector
            assert connector is not None and connector._keepalive_timeout is not None
            return connector._keepalive_timeout
        finally:
            await transport.aclose()

    server_keepalive = uvicorn.Config(app="studio.asgi:application").timeout_keep_alive
    assert asyncio.run(idle_keepalive()) < server_keepalive
