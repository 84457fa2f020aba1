"""An httpx transport that sends requests with aiohttp.

httpx's own pool (httpcore) does work proportional to its open connections on
every request: at 32-64 concurrent requests that costs ~10 ms of CPU per call
and caps a client near 100 requests/s on a small machine, while aiohttp does
the same traffic at well over 1,000/s. The studio keeps httpx's API (requests,
responses, timeouts, exceptions, ``MockTransport`` in tests) and swaps only the
wire, so callers and their error handling do not change.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from functools import cache
from typing import Any

import aiohttp
import httpx

# Headers aiohttp computes itself from the body it sends.
_SKIPPED_HEADERS = {b"content-length", b"transfer-encoding"}

#: Seconds an idle pooled connection is kept: under uvicorn's 5 s keep-alive (the
#: studio's web server and SGLang's), so the client drops an idle connection before
#: the server closes it. With aiohttp's default of 15 s, a request sent on a connection
#: the server is closing just then fails with "Server disconnected" (the likely cause of
#: one such failure under load), and a step is not safe to send again.
IDLE_KEEPALIVE_S = 4.0


@cache
def tls_context() -> ssl.SSLContext:
    """One TLS context per process (httpx's default: certifi's CA store); building one
    costs tens of milliseconds."""
    return httpx.create_ssl_context()


def pooled_session(max_connections: int, **options: Any) -> aiohttp.ClientSession:
    """An aiohttp session with a pool of ``max_connections``, the process's TLS context
    and the idle keep-alive above; ``options`` go to the session (headers, timeout)."""
    connector = aiohttp.TCPConnector(
        limit=max_connections, ssl=tls_context(), keepalive_timeout=IDLE_KEEPALIVE_S
    )
    return aiohttp.ClientSession(connector=connector, auto_decompress=False, **options)


class AiohttpTransport(httpx.AsyncBaseTransport):
    """Send httpx requests over one aiohttp session, created on first use in the running loop."""

    def __init__(self, *, max_connections: int = 256) -> None:
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = pooled_session(self._max_connections, timeout=aiohttp.ClientTimeout())
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=timeouts.get("connect"),
            sock_read=timeouts.get("read"),
        )
        headers = [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in request.headers.raw
            if name.lower() not in _SKIPPED_HEADERS
        ]
        body = await request.aread()
        try:
            response = await self._client().request(
                request.method,
                str(request.url),
                headers=headers,
                data=body or None,
                allow_redirects=False,
                timeout=timeout,
                skip_auto_headers=("User-Agent", "Accept-Encoding"),
            )
        except (aiohttp.ClientConnectorError, aiohttp.ClientSSLError) as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc
        except aiohttp.ConnectionTimeoutError as exc:
            raise httpx.ConnectTimeout(str(exc) or "connect timed out", request=request) from exc
        except aiohttp.ServerDisconnectedError as exc:
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise httpx.ReadTimeout(str(exc) or "timed out", request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx.NetworkError(str(exc), request=request) from exc
        return httpx.Response(
            status_code=response.status,
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers],
            stream=_ResponseStream(response, request),
            request=request,
            extensions={"http_version": b"HTTP/1.1"},
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise httpx.ReadTimeout(str(exc) or "timed out", request=self._request) from exc
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError) as exc:
            raise httpx.RemoteProtocolError(str(exc), request=self._request) from exc
        except aiohttp.ClientError as exc:
            raise httpx.ReadError(str(exc), request=self._request) from exc

    async def aclose(self) -> None:
        # Closing (not releasing) drops the connection at once: a server streaming
        # tokens sees the client go away and stops generating.
        if not self._response.closed:
            self._response.close()
        await asyncio.sleep(0)
