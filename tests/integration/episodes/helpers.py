"""Rows for episode tests: a project with members, a world, an episode on an endpoint."""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth import get_user_model

from studio.core.models import Membership, ModelEndpoint, Project
from studio.episodes import services
from studio.episodes.models import Episode, Step
from studio.lib.tasks import wait_for_inprocess_tasks
from studio.worlds.services import world_create

TERMINAL_WORLD = {
    "domain": "terminal",
    "title": "Build box",
    "premise": "A Debian machine with a Python project in /srv/app.",
    "initial_observation": "alice@box:/srv/app$ ",
}


def project_with(username: str = "alice", role: str = "owner") -> tuple[Project, Any]:
    user = get_user_model().objects.create_user(username, "", "pw-12345678")
    project = Project.objects.create(name=f"P {username}", slug=f"p-{username}")
    Membership.objects.create(project=project, user=user, role=role)
    return project, user


def endpoint(project: Project, base_url: str, **config: Any) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        project=project,
        name=f"test-server-{ModelEndpoint.objects.count()}",
        kind="openai",
        base_url=base_url,
        model="world-studio-test",
        config={"max_retries": 0, "timeout": 10, **config},
    )


def replay_endpoint(project: Project, observations: list[str]) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        project=project,
        name=f"replay-{ModelEndpoint.objects.count()}",
        kind="replay",
        config={"observations": observations, "chunk_size": 4},
    )


def episode(
    project: Project,
    user: Any,
    *,
    spec: dict[str, Any] | None = None,
    model: ModelEndpoint | None = None,
    **kwargs: Any,
) -> Episode:
    world = world_create(project=project, spec=spec or TERMINAL_WORLD, user=user)
    assert world.head is not None
    return services.episode_create(
        project=project, user=user, world_revision=world.head, endpoint=model, **kwargs
    )


def wait_for_step(
    step_id: int, timeout: float = 30, statuses: tuple[str, ...] = ("done", "failed", "cancelled")
) -> Step:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "running" not in statuses:
            wait_for_inprocess_tasks(timeout)
        step = Step.objects.get(pk=step_id)
        if step.status in statuses:
            return step
        time.sleep(0.05)
    raise TimeoutError(f"step {step_id} is still {Step.objects.get(pk=step_id).status}")
