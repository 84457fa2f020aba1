"""The one shape of the studio's WebSockets: a page's live view of one thing.

Every socket does the same five things, here and only here:

1. refuse an anonymous user (close code :data:`UNAUTHORIZED`);
2. let the app's consumer find its object through :mod:`studio.core.access` and
   name the object's group; an object the user may not see closes the socket with
   :data:`NOT_FOUND`, exactly as a missing one does (its existence never leaks);
3. join the group, accept, and send the object's state as the database has it,
   so a browser that (re)connects late never misses where things stand;
4. relay the group's events (:mod:`studio.lib.channels` names them): a
   ``progress`` event carries the fragment to show, or nothing, and then the
   consumer renders it again from the database (:meth:`LiveConsumer.refresh`);
5. run what the browser sends (:meth:`LiveConsumer.act`), showing a
   :class:`~studio.errors.StudioError`'s message and nothing else: any other
   exception is a bug, logged, and the user gets a generic message.

What goes to the browser is always HTML that htmx's ws extension swaps in by id.
An app's consumer says only what is particular to it: :meth:`~LiveConsumer.join`,
:meth:`~LiveConsumer.state`, and where it takes actions, :meth:`~LiveConsumer.act`
and :meth:`~LiveConsumer.problem`.

Their database work goes through :func:`studio.lib.db.db_call`, as the env API's does,
not Channels' ``database_sync_to_async``: that one is thread-sensitive, so every socket
of a process ran its database work in one shared thread, one call at a time, and one
slow query held up every other socket's. ``db_call`` runs them on the loop's database
threads, as many at once as the connection pool allows, finishing work first.
For the same reason a message is handled without Channels' ``close_old_connections``
first (see :meth:`LiveConsumer.dispatch`).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.core.exceptions import PermissionDenied
from django.http import Http404

from studio.errors import NotAllowed, NotFound, StudioError
from studio.lib.db import Priority, db_call

logger = logging.getLogger(__name__)

#: Close codes (4000-4999 belong to the application): 4000 plus HTTP's 401 and 404.
UNAUTHORIZED = 4401
NOT_FOUND = 4404

#: What the user is told when an action fails for a reason that is not theirs.
GENERIC_PROBLEM = "Something went wrong on our side; it has been logged. Try again."


class LiveConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]
    """Authentication, access, the group, the state on connect, progress and actions."""

    #: The route's keyword argument that holds the object's id (``None``: no object).
    id_kwarg: str | None = "pk"

    group: str

    # --- what an app's consumer says -------------------------------------------------------

    def join(self, user: Any, object_id: int | None) -> str:
        """Find the object (through ``studio.core.access``) and return its group's name.

        Runs in a database thread. Raises Http404, PermissionDenied or a
        :class:`~studio.errors.NotFound` when the user may not see the object.
        """
        raise NotImplementedError

    def state(self) -> str:
        """The object's fragment(s) as the database has them now ("" sends nothing)."""
        return ""

    def refresh(self) -> str:
        """What a ``progress`` event without HTML sends: by default the whole state again."""
        return self.state()

    def act(self, content: dict[str, Any]) -> str:
        """Do what the browser asked; the HTML to send back ("" sends nothing).

        Runs in a database thread; raises a StudioError to show its message.
        """
        return ""

    def problem(self, message: str) -> str:
        """How this page shows a refused action (its message is safe to show)."""
        return ""

    # --- the shared part -----------------------------------------------------------------

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Run the message's handler, without Channels' ``close_old_connections`` first.

        Channels runs that in the process's one shared sync thread before every message
        (each streamed delta, on each socket watching it): a thread hop per message, 8 %
        of the web process's CPU at 200 sockets, serialised through that thread. It
        would close nothing: these consumers' database work runs in ``db_call``, whose
        connections go back to the pool after each call.
        """
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            await super().dispatch(message)  # Channels' own error for an unknown type
            return
        await handler(message)

    async def connect(self) -> None:
        user = self.scope["user"]
        if not user.is_authenticated:
            await self.close(code=UNAUTHORIZED)
            return
        object_id = None
        if self.id_kwarg is not None:
            object_id = int(self.scope["url_route"]["kwargs"][self.id_kwarg])
        try:
            group = await db_call(self.join, user, object_id)
        except (Http404, PermissionDenied, NotFound, NotAllowed):
            await self.close(code=NOT_FOUND)
            return
        self.group = group
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_html(await db_call(self.state))

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def send_html(self, html: str) -> None:
        if html:
            await self.send(text_data=html)

    async def progress(self, event: dict[str, Any]) -> None:
        """The ``progress`` event: the object changed; show its fragment."""
        html: str | None = event.get("html")
        if html is None:
            html = await db_call(self.refresh, priority=Priority.FINISH)
        await self.send_html(html)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """A JSON object from the browser (htmx's ``ws-send``); anything else is ignored."""
        try:
            content = json.loads(text_data or "")
        except ValueError:
            return
        if isinstance(content, dict):
            await self.send_html(await db_call(self._act, content))

    def _act(self, content: dict[str, Any]) -> str:
        try:
            return self.act(content)
        except StudioError as exc:
            return self.problem(str(exc))
        except Exception:
            logger.exception("%s failed to act on %r", type(self).__name__, content)
            return self.problem(GENERIC_PROBLEM)
