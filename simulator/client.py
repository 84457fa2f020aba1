"""Clients for the studio's environment API: a Gymnasium-style env and an async client.

    env = StudioEnv("http://127.0.0.1:8000", token="wst_...", scenario=3, seed=0)
    observation, info = env.reset()
    observation, reward, terminated, truncated, info = env.step("ls -la")
    env.close()

``AsyncStudioClient`` drives many environments at once over one pooled
``httpx.AsyncClient``. Errors the API answers with (``{"error": {"code",
"message"}}``) raise :class:`StudioAPIError`; HTTP 429 (rate limited) and 503
(overloaded: sent before the studio stored anything) are retried after their
``Retry-After``. Pure Python (httpx only): no Django, no gymnasium needed.
"""

from __future__ import annotations

import asyncio
import time
from types import TracebackType
from typing import Any

import httpx

from simulator.http_transport import AiohttpTransport

StepResult = tuple[str, float, bool, bool, dict[str, Any]]

__all__ = ["AsyncStudioClient", "StudioAPIError", "StudioEnv"]


class StudioAPIError(Exception):
    """An error answer from the studio: ``status``, ``code`` and ``message``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        self.status = status
        self.code = code
        self.message = message
        super().__init__(f"HTTP {status} {code}: {message}")


def _raise_for(response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.is_success and isinstance(data, dict):
        return data
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        raise StudioAPIError(
            response.status_code, str(error.get("code")), str(error.get("message"))
        )
    raise StudioAPIError(response.status_code, "http_error", response.text[:200])


#: Answers that mean "nothing happened, ask again after Retry-After".
RETRIED = (429, 503)


def _retry_after(response: httpx.Response) -> float:
    try:
        return max(float(response.headers.get("Retry-After", "1")), 0.05)
    except ValueError:
        return 1.0


def _headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "User-Agent": "world-studio-client"}


class StudioEnv:
    """One scenario as a Gymnasium-style environment (``reset``/``step``/``close``).

    Each :meth:`reset` starts a new studio episode (closing the previous one).
    Observations are text; ``info`` carries the step index, perturbations fired,
    verifier results and telemetry.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        scenario: int,
        *,
        seed: int | None = None,
        timeout: float = 330.0,
        max_rate_limit_retries: int = 5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.scenario = scenario
        self.seed = seed
        self.env_id: int | None = None
        self._retries = max_rate_limit_retries
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=_headers(token),
            timeout=timeout,
            transport=transport,
        )

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        for _ in range(self._retries):
            response = self._http.post(path, json=body)
            if response.status_code not in RETRIED:
                return _raise_for(response)
            time.sleep(_retry_after(response))
        return _raise_for(response)

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """Start a new episode; returns the initial observation and info."""
        if self.env_id is not None:
            self._close_current()
        if seed is not None:
            self.seed = seed
        data = self._post("/api/v1/envs", {"scenario": self.scenario, "seed": self.seed})
        self.env_id = int(data["id"])
        return str(data["observation"]), dict(data["info"])

    def step(self, action: str) -> StepResult:
        """Take ``action``; returns (observation, reward, terminated, truncated, info)."""
        if self.env_id is None:
            raise RuntimeError("call reset() before step()")
        data = self._post(f"/api/v1/envs/{self.env_id}/step", {"action": action})
        return (
            str(data["observation"]),
            float(data["reward"]),
            bool(data["terminated"]),
            bool(data["truncated"]),
            dict(data["info"]),
        )

    def state(self) -> dict[str, Any]:
        """The environment's state as the studio has it (GET /api/v1/envs/{id})."""
        if self.env_id is None:
            raise RuntimeError("call reset() first")
        return _raise_for(self._http.get(f"/api/v1/envs/{self.env_id}"))

    def _close_current(self) -> None:
        try:
            self._post(f"/api/v1/envs/{self.env_id}/close", {})
        except StudioAPIError as exc:
            if exc.status != 404:
                raise
        self.env_id = None

    def close(self) -> None:
        """Close the current episode and the HTTP connection."""
        try:
            if self.env_id is not None:
                self._close_current()
        finally:
            self._http.close()

    def __enter__(self) -> StudioEnv:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncStudioClient:
    """Many environments at once: ``await client.create(...)`` then ``step``/``close`` by id.

    One ``httpx.AsyncClient`` with a connection pool of ``max_connections`` serves them all.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        max_connections: int = 100,
        timeout: float = 330.0,
        max_rate_limit_retries: int = 5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._retries = max_rate_limit_retries
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=_headers(token),
            timeout=timeout,
            transport=transport or AiohttpTransport(max_connections=max_connections),
        )

    async def _request(
        self, method: str, path: str, body: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        for _ in range(self._retries):
            response = await self._http.request(method, path, json=body)
            if response.status_code not in RETRIED:
                return _raise_for(response)
            await asyncio.sleep(_retry_after(response))
        return _raise_for(response)

    async def scenarios(self) -> list[dict[str, Any]]:
        return list((await self._request("GET", "/api/v1/scenarios"))["scenarios"])

    async def create(
        self, scenario: int, *, seed: int | None = None
    ) -> tuple[int, str, dict[str, Any]]:
        """A new environment: (id, initial observation, info)."""
        data = await self._request("POST", "/api/v1/envs", {"scenario": scenario, "seed": seed})
        return int(data["id"]), str(data["observation"]), dict(data["info"])

    async def step(self, env_id: int, action: str) -> StepResult:
        data = await self._request("POST", f"/api/v1/envs/{env_id}/step", {"action": action})
        return (
            str(data["observation"]),
            float(data["reward"]),
            bool(data["terminated"]),
            bool(data["truncated"]),
            dict(data["info"]),
        )

    async def get(self, env_id: int) -> dict[str, Any]:
        return await self._request("GET", f"/api/v1/envs/{env_id}")

    async def close(self, env_id: int) -> None:
        await self._request("POST", f"/api/v1/envs/{env_id}/close", {})

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncStudioClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
