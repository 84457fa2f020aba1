from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from studio.core.consumers import UNAUTHORIZED
from studio.traces.models import ImportJob, Simulation

NOT_FOUND = 4404


class ProgressConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]
    """Live progress of an import or a simulation: relays the task's HTML fragments.

    On connect it sends the current state first, so a browser that (re)connects
    late still sees where the job stands.
    """

    kind = ""

    async def connect(self) -> None:
        user = self.scope["user"]
        if not user.is_authenticated:
            await self.close(code=UNAUTHORIZED)
            return
        found = await self._load(user, int(self.scope["url_route"]["kwargs"]["pk"]))
        if found is None:
            await self.close(code=NOT_FOUND)
            return
        self.group, html = found
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send(text_data=html)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def progress(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["html"])

    # Live review (studio/traces/turn_judging.py, trajectory_judging.py): a turn's badges
    # after a judge score or a verdict is saved, or the trajectory judge's card; the
    # fragment is rendered (and escaped) by the sender and swapped in by its id.
    async def review_update(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["html"])

    async def _load(self, user: Any, pk: int) -> tuple[str, str] | None:
        found: tuple[str, str] | None = await database_sync_to_async(self._load_sync)(user, pk)
        return found

    def _load_sync(self, user: Any, pk: int) -> tuple[str, str] | None:
        if self.kind == "import":
            job = ImportJob.objects.filter(pk=pk, project__memberships__user=user).first()
            if job is None:
                return None
            return job.group_name, render_to_string("traces/_import-progress.html", {"job": job})
        simulation = Simulation.objects.filter(pk=pk, project__memberships__user=user).first()
        if simulation is None:
            return None
        total = simulation.trace.turns.count()
        html = render_to_string(
            "traces/_simulation-progress.html", {"simulation": simulation, "total": total}
        )
        return simulation.group_name, html


class ImportProgressConsumer(ProgressConsumer):
    kind = "import"


class SimulationProgressConsumer(ProgressConsumer):
    kind = "simulation"
