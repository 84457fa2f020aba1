"""Sending to channel-layer groups from tasks and services, and the events sent.

Every group message's ``type`` is one of the events below; a consumer handles it
with the method of the same name (see :mod:`studio.lib.consumers`). They are
named here once: a sender and a listener that spelled one differently would
fail silently, since channel layers drop what nobody handles.
"""

from __future__ import annotations

from typing import Any

from channels.layers import get_channel_layer

from studio.lib.step_loop import run_on_step_loop

#: The object changed. With ``html`` (the fragment, rendered by the sender) it is sent
#: as is; without, each consumer renders the object's state again from the database.
PROGRESS = "progress"
#: An episode's step row changed (``step_id``, ``seq``): pages re-render it, waits wake.
STEP = "step"
#: Text streamed into a running step (``step_id``, ``index``, ``seq``, ``reasoning``,
#: ``observation``): appended on the page unless the socket already holds it.
DELTA = "delta"
#: The status page's pipeline check came back (``sent_at``, ``worker``).
PONG = "pong"


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
