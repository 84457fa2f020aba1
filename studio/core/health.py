"""What the status page and /healthz report: one check per moving part."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection

from studio.celery import app
from studio.core.endpoints import (
    default_backend,
    default_endpoint_spec,
    describe_spec,
    prompt_layout,
)
from studio.lib.channels import group_name
from studio.lib.inbox import addressed, listening

TIMEOUT_S = 3.0


@dataclass
class Check:
    ok: bool
    detail: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        extra = data.pop("extra")
        return {**data, **extra}


def check_database() -> Check:
    vendor = connection.vendor
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return Check(False, f"{vendor}: {exc}", {"vendor": vendor})
    name = settings.DATABASES["default"]["NAME"]
    return Check(True, f"{vendor} ({name})", {"vendor": vendor})


async def check_channel_layer() -> Check:
    layer = get_channel_layer()
    backend = type(layer).__name__ if layer is not None else "none"
    if layer is None:
        return Check(False, "no channel layer configured", {"backend": backend})
    # Through a group, as every message of the studio goes, and left when done (a pub/sub
    # layer's channel of its own would stay subscribed after each check).
    group = group_name("health", uuid.uuid4().hex)
    try:
        async with listening(group) as inbox:
            assert inbox is not None
            await layer.group_send(group, addressed(group, {"type": "health.ping"}))
            message = await asyncio.wait_for(inbox.get(), TIMEOUT_S)
    except Exception as exc:
        return Check(False, f"{backend}: {exc!r}", {"backend": backend})
    ok = message.get("type") == "health.ping"
    return Check(ok, f"{backend}: round trip {'ok' if ok else 'garbled'}", {"backend": backend})


def check_tasks() -> Check:
    runner = settings.TASK_RUNNER
    if runner != "celery":
        return Check(True, "in-process thread pool", {"runner": runner, "workers": []})
    try:
        replies = app.control.ping(timeout=1.0)
    except Exception as exc:
        return Check(False, f"broker unreachable: {exc}", {"runner": runner, "workers": []})
    workers = sorted(name for reply in replies or [] for name in reply)
    detail = f"{len(workers)} Celery worker(s) answering" if workers else "no Celery worker answers"
    return Check(bool(workers), detail, {"runner": runner, "workers": workers})


async def check_world_model() -> Check:
    spec = default_endpoint_spec()
    extra = {
        "kind": spec["kind"],
        "endpoint": describe_spec(spec),
        "prompt_layout": prompt_layout(None),
    }
    try:
        backend = default_backend()
    except Exception as exc:
        return Check(False, f"{extra['endpoint']}: cannot configure: {exc}", extra)
    try:
        health = await asyncio.wait_for(backend.health(), TIMEOUT_S)
    except Exception as exc:
        return Check(False, f"{extra['endpoint']}: {exc!r}", extra)
    finally:
        await backend.aclose()
    return Check(
        health.ok,
        f"{extra['endpoint']}, {extra['prompt_layout']} prompt layout: {health.detail}",
        extra,
    )


def run_checks() -> dict[str, Any]:
    """All checks. The two network checks run concurrently on one event loop."""
    started = time.perf_counter()
    database = check_database()
    tasks = check_tasks()
    layer, model = async_to_sync(_network_checks)()
    checks = {"database": database, "channel_layer": layer, "tasks": tasks, "world_model": model}
    return {
        "ok": all(check.ok for check in checks.values()),
        "mode": settings.MODE,
        **{name: check.to_dict() for name, check in checks.items()},
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
    }


async def _network_checks() -> tuple[Check, Check]:
    layer, model = await asyncio.gather(check_channel_layer(), check_world_model())
    return layer, model
