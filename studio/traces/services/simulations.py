"""Re-simulating a recorded trace: each turn sent to the world model, saved as it comes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.template.loader import render_to_string
from django.utils import timezone

from simulator.backends import create_backend
from simulator.perturbations import Perturbation
from simulator.review.awb_eval import RecordedTurn, SimulatedTurnResult, simulate_trace
from simulator.types import Sampling
from studio.core.endpoints import default_endpoint_spec, describe_spec
from studio.core.models import ModelEndpoint
from studio.exports.records import trace_world, turn_row
from studio.lib.channels import send_to_group
from studio.lib.step_loop import stream_on_step_loop
from studio.lib.tasks import dispatch
from studio.traces.models import SimulatedTurn, Simulation, SimulationStatus, Trace


def endpoint_spec(endpoint: ModelEndpoint | None) -> dict[str, Any]:
    return endpoint.to_spec() if endpoint is not None else default_endpoint_spec()


def simulation_create(
    *,
    trace: Trace,
    user: Any,
    mode: str,
    scenario: Any = None,
    endpoint: ModelEndpoint | None = None,
) -> Simulation:
    # A real cycle: the task module runs this package's services.
    from studio.traces.tasks import run_simulation

    simulation = Simulation.objects.create(
        project=trace.project,
        trace=trace,
        mode=mode,
        scenario=scenario,
        endpoint=endpoint,
        endpoint_label=describe_spec(endpoint_spec(endpoint)),
        created_by=user,
        dispatched_at=timezone.now(),
    )
    dispatch(run_simulation, simulation.pk)
    return simulation


def _turn_fields(outcome: SimulatedTurnResult) -> dict[str, Any]:
    real = [v.to_dict() for v in outcome.real_verifiers]
    notes = list(outcome.action_notes)  # what the studio could not validate in the action
    if outcome.result is None:
        return {
            "error": f"{outcome.error_kind}: {outcome.error}",
            "real_verifiers": real,
            "telemetry": {"action_notes": notes},
        }
    result = outcome.result
    return {
        "observation": result.observation,
        "reasoning": result.reasoning,
        "raw_output": result.raw_output,
        "telemetry": {
            **result.timings.to_dict(),
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "cached_tokens": result.usage.cached_tokens,
            "finish_reason": result.finish_reason,
            "action_notes": notes,
        },
        "firings": [f.to_dict() for f in result.firings],
        "verifiers": [v.to_dict() for v in result.verifiers],
        "real_verifiers": real,
    }


def simulation_claim(simulation_id: int) -> bool:
    """pending -> running in one conditional UPDATE; also takes over an abandoned run.

    A simulation still running after the task time limit was claimed by a worker
    that died (a living one is killed at that limit): its turns are run again and
    saved over the same rows.
    """
    stale = timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    abandoned = Q(status=SimulationStatus.RUNNING, started_at__lt=stale)
    claimed = Simulation.objects.filter(
        Q(status=SimulationStatus.PENDING) | abandoned, pk=simulation_id
    ).update(status=SimulationStatus.RUNNING, started_at=timezone.now())
    return claimed == 1


def simulation_run(*, simulation_id: int) -> Simulation:
    """Claim a pending simulation and run it, saving and publishing each turn."""
    claimed = simulation_claim(simulation_id)
    simulation = Simulation.objects.select_related("trace", "scenario", "endpoint").get(
        pk=simulation_id
    )
    if not claimed:
        return simulation
    trace = simulation.trace
    turns = list(trace.turns.all())
    perturbations: tuple[Perturbation, ...] = ()
    seed = 0
    sampling: Sampling | None = None  # eval.py's, unless the scenario sets its own
    if simulation.scenario is not None:
        spec = simulation.scenario.spec
        perturbations = tuple(Perturbation.from_dict(p) for p in spec.get("perturbations", []))
        seed = int(spec.get("seed", 0))
        if spec.get("sampling"):
            sampling = Sampling.from_dict(spec["sampling"])
    by_index = {t.index: t for t in turns}

    def save(outcome: SimulatedTurnResult) -> None:
        SimulatedTurn.objects.update_or_create(
            simulation=simulation,
            index=outcome.index,
            defaults={"turn": by_index[outcome.index], **_turn_fields(outcome)},
        )
        Simulation.objects.filter(pk=simulation.pk).update(turns_done=outcome.index)
        simulation.turns_done = outcome.index

    rows = (
        [turn_row(trace, t.index) for t in turns] if trace.rows.exists() else None
    )  # an imported benchmark trace: each request is eval.py's for its row

    # The model calls run on the step loop; each turn comes back here to be saved, so
    # the database is only touched from this thread.
    async def run(put: Callable[[SimulatedTurnResult], None]) -> None:
        backend = create_backend(endpoint_spec(simulation.endpoint))
        try:
            await simulate_trace(
                trace_world(trace),
                [RecordedTurn(t.action, t.observation) for t in turns],
                backend,
                mode=simulation.mode,
                perturbations=perturbations,
                seed=seed,
                rows=rows,
                sampling=sampling,
                on_turn=put,
            )
        finally:
            await backend.aclose()

    simulation.status = SimulationStatus.DONE
    try:
        for outcome in stream_on_step_loop(run):
            save(outcome)
            send_to_group(
                simulation.group_name,
                {"type": "progress", "html": simulation_progress_html(simulation, len(turns))},
            )
    except Exception as exc:
        simulation.status = SimulationStatus.FAILED
        simulation.error = f"{type(exc).__name__}: {exc}"
    simulation.finished_at = timezone.now()
    simulation.save(update_fields=["status", "error", "finished_at"])
    send_to_group(
        simulation.group_name,
        {"type": "progress", "html": simulation_progress_html(simulation, len(turns))},
    )
    return simulation


def simulation_progress_html(simulation: Simulation, total: int) -> str:
    return render_to_string(
        "traces/_simulation-progress.html", {"simulation": simulation, "total": total}
    )
