"""A three-turn terminal trace and its simulation, for the review tests."""

from __future__ import annotations

from pathlib import Path

from studio.core.models import ModelEndpoint, Project
from studio.traces import services
from studio.traces.models import Simulation, Trace


def imported_trace(project: Project, fixtures_dir: Path) -> Trace:
    services.import_file(
        project=project, path=fixtures_dir / "agentworldbench" / "synthetic_terminal.jsonl"
    )
    return Trace.objects.get(project=project)


def simulate(trace: Trace, observations: list[str]) -> Simulation:
    endpoint = ModelEndpoint.objects.create(
        project=trace.project, name="replay", kind="replay", config={"observations": observations}
    )
    simulation = Simulation.objects.create(
        project=trace.project, trace=trace, mode="teacher_forced", endpoint=endpoint
    )
    return services.simulation_run(simulation_id=simulation.pk)


def judge_endpoint(project: Project, base_url: str) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        project=project, name="judge", kind="openai", base_url=base_url, model="judge"
    )
