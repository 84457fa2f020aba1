"""Live progress of an import or a simulation: the task sends the fragments."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from studio.core.access import get_for_member
from studio.lib.consumers import LiveConsumer
from studio.traces.models import ImportJob, Simulation


class ImportProgressConsumer(LiveConsumer):
    def join(self, user: Any, object_id: int | None) -> str:
        job = get_for_member(user, ImportJob.objects.all(), pk=object_id)
        self.job_id = job.pk
        return job.group_name

    def state(self) -> str:
        job = ImportJob.objects.get(pk=self.job_id)
        return render_to_string("traces/_import-progress.html", {"job": job})


class SimulationProgressConsumer(LiveConsumer):
    def join(self, user: Any, object_id: int | None) -> str:
        simulation = get_for_member(user, Simulation.objects.all(), pk=object_id)
        self.simulation_id = simulation.pk
        return simulation.group_name

    def state(self) -> str:
        simulation = Simulation.objects.select_related("trace").get(pk=self.simulation_id)
        total = simulation.trace.turns.count()
        context = {"simulation": simulation, "total": total}
        return render_to_string("traces/_simulation-progress.html", context)
