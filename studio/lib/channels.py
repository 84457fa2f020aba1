"""Sending to channel-layer groups from tasks and services."""

from __future__ import annotations

from typing import Any

from channels.layers import get_channel_layer

from studio.lib.step_loop import run_on_step_loop


def group_name(kind: str, ident: object) -> str:
    """A channel-layer group name; only ASCII letters, digits, '-', '_' and '.' are allowed."""
    return f"{kind}-{ident}"


def send_to_group(group: str, message: dict[str, Any]) -> None:
    """Send one event from synchronous code; in async code await ``group_send`` directly.

    Sent from the process's step loop, so every thread shares its channel-layer
    connections instead of making an event loop and a Redis connection per event.
    """
    layer = get_channel_layer()
    if layer is not None:
        run_on_step_loop(lambda: layer.group_send(group, message), release_db=False)
