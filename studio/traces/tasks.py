from __future__ import annotations

from celery import shared_task

from studio.traces import services, trajectory_judging, turn_judging


@shared_task(name="traces.run_import")
def run_import(job_id: int) -> None:
    """Import an uploaded file (idempotent: a job already claimed is not run again)."""
    services.import_run(job_id=job_id, publish=services.publish_import)


@shared_task(name="traces.run_simulation")
def run_simulation(simulation_id: int) -> None:
    """Run the world model over a trace (idempotent: claims the pending simulation)."""
    services.simulation_run(simulation_id=simulation_id)


@shared_task(name="traces.judge_simulation")
def judge_simulation(
    simulation_id: int, endpoint_id: int | None = None, turing: bool = False
) -> None:
    """Judge every simulated turn, concurrently; each score is shown live as it lands."""
    turn_judging.judge_simulation(
        simulation_id=simulation_id, endpoint_id=endpoint_id, turing=turing
    )


@shared_task(name="traces.judge_trajectory")
def judge_trajectory(simulation_id: int, endpoint_id: int | None = None) -> None:
    """Judge the simulated trajectory as a whole; the verdict is stored on the simulation."""
    trajectory_judging.trajectory_judge_run(simulation_id=simulation_id, endpoint_id=endpoint_id)
