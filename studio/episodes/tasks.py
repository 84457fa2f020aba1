"""Episode tasks: run one step, and let an automatic agent take the next one.

Both are late-acknowledged and safe to deliver twice: ``run_step`` claims its
step with a conditional UPDATE (a second delivery finds it no longer pending and
returns), ``agent_run`` takes a turn with a conditional UPDATE on the episode.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from simulator.errors import SimulatorError
from studio.episodes import services
from studio.episodes.agents import next_action
from studio.episodes.models import Episode, RunStatus
from studio.episodes.runner import claim_and_run
from studio.lib.step_loop import run_on_step_loop


@shared_task(name="episodes.run_step", acks_late=True)
def run_step(step_id: int) -> None:
    """Run step ``step_id`` on the step loop; this thread only waits for it to end."""
    run_on_step_loop(lambda: claim_and_run(step_id))


@shared_task(name="episodes.agent_run", acks_late=True)
def agent_step(episode_id: int) -> None:
    """The automatic agent's next step, while the episode's run lasts."""
    episode = Episode.objects.filter(pk=episode_id).first()
    if episode is None or episode.run_status != RunStatus.RUNNING:
        return
    if episode.steps.filter(status__in=services.BUSY).exists():
        return  # the running step dispatches this task again when it ends
    if not services.agent_claim_turn(episode=episode):
        services.episode_update(episode=episode, run_status=RunStatus.IDLE, run_remaining=0)
        return
    problem: Any = None
    try:
        action = next_action(episode)
        if action is None:
            services.episode_update(episode=episode, run_status=RunStatus.IDLE, run_remaining=0)
            return
        services.step_submit(episode=episode, action=action)
    except (SimulatorError, services.EpisodeBusy, services.EpisodeClosed) as exc:
        problem = exc
    if problem is not None:
        metadata = {**episode.metadata, "agent_error": f"{type(problem).__name__}: {problem}"}
        services.episode_update(episode=episode, run_status=RunStatus.PAUSED, metadata=metadata)
