"""Sending to channel-layer groups from tasks and services."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer


def group_name(kind: str, ident: object) -> str:
    """A channel-layer group name; only ASCII letters, digits, '-', '_' and '.' are allowed."""
    return f"{kind}-{ident}"


def send_to_group(group: str, message: dict[str, Any]) -> None:
    """Send one event from synchronous code; in async code await ``group_send`` directly."""
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, message)
