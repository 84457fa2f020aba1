"""What the episode page's fragments show: one context per partial template.

The page's views and the episode's WebSocket consumer render the same partials
(``episodes/_step.html``, ``episodes/_controls.html``) from these contexts, so a
step looks the same whether it came with the page or over the socket.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from simulator.errors import OutputCutOff
from simulator.perturbations import PERTURBATION_KINDS
from studio.episodes.composer import composer_context
from studio.episodes.models import Episode, EpisodeStatus, RunStatus, Step, StepStatus
from studio.episodes.selectors import busy_step, last_observation
from studio.lib.render_response import on_render_origin


def step_context(step: Step, can_edit: bool, *, last: bool = True) -> dict[str, Any]:
    """What a step's fragment shows; only the ``last`` step of an episode can be retried."""
    telemetry = step.telemetry or {}
    return {
        "step": step,
        "can_edit": can_edit,
        "render_url": on_render_origin(
            reverse("episodes:render-step", kwargs={"pk": step.episode_id, "index": step.index})
        ),
        "live": step.status in (StepStatus.PENDING, StepStatus.RUNNING),
        "retryable": can_edit and last and step.status in (StepStatus.FAILED, StepStatus.CANCELLED),
        "forkable": can_edit and step.status == StepStatus.DONE,
        "telemetry": telemetry,
        # A max_tokens cut is the model running out of room, never a malformed answer:
        # a failed step had no observation yet, a done one may have a partial one.
        "cut_off": step.error_kind == OutputCutOff.__name__
        or (step.status == StepStatus.DONE and telemetry.get("finish_reason") == "length"),
        "verifiers_failed": sum(1 for v in step.verifiers if not v.get("passed")),
    }


def steps_context(steps: list[Step], can_edit: bool) -> list[dict[str, Any]]:
    """The timeline's steps, in order; the last one is the only one that can be retried."""
    return [step_context(s, can_edit, last=s is steps[-1]) for s in steps]


def status_context(episode: Episode, can_edit: bool, busy: Step | None) -> dict[str, Any]:
    """The status row alone (``episodes/_status.html``). A step that is pending or
    running changes nothing else on the page, so its events send only this row."""
    return {
        "episode": episode,
        "can_edit": can_edit,
        "busy": busy,
        "accepting": can_edit and episode.status == EpisodeStatus.ACTIVE and busy is None,
        "running": episode.run_status == RunStatus.RUNNING,
    }


def controls_context(episode: Episode, can_edit: bool) -> dict[str, Any]:
    """The side panels: status, perturbations, the automatic agent and the composer."""
    world = episode.world_revision.to_world()
    busy = busy_step(episode)
    disabled = set(episode.disabled_perturbations)
    return {
        **status_context(episode, can_edit, busy),
        "perturbations": [
            {"index": i, "data": p, "enabled": i not in disabled}
            for i, p in enumerate(episode.perturbations)
        ],
        "next_perturbations": episode.next_perturbations,
        "kinds": [info.to_dict() for info in PERTURBATION_KINDS.values()],
        "agent": episode.agent or {"kind": "human"},
        "agent_actions": "\n".join(episode.agent.get("actions", [])),
        "agent_error": episode.metadata.get("agent_error", ""),
        **composer_context(world, last_observation(episode)),
    }
