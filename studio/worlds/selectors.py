"""Reads for worlds and scenarios: lists, revision diffs and the step-1 prompt preview."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from simulator.domains import domain_names, get_domain
from simulator.perturbations import (
    PERTURBATION_KINDS,
    Perturbation,
    StepContext,
    firing_indexes,
    prompted_firings,
)
from simulator.prompting import build_messages, domain_for, estimate_tokens
from simulator.scenario import Scenario as ScenarioSpec
from simulator.types import Message, PromptLayout
from studio.core.access import EDIT_ROLES
from studio.core.endpoints import request_layout
from studio.core.models import ModelEndpoint, Project
from studio.worlds.models import Scenario, World, WorldRevision

User = AbstractBaseUser | AnonymousUser


def world_list(*, user: User, project: str = "", archived: bool = False) -> QuerySet[World]:
    if not user.is_authenticated:
        return World.objects.none()
    qs = World.objects.filter(project__memberships__user_id=user.pk, archived=archived)
    if project:
        qs = qs.filter(project__slug=project)
    return qs.select_related("project", "head").distinct()


def scenario_list(*, user: User, project: str = "", archived: bool = False) -> QuerySet[Scenario]:
    if not user.is_authenticated:
        return Scenario.objects.none()
    qs = Scenario.objects.filter(project__memberships__user_id=user.pk, archived=archived)
    if project:
        qs = qs.filter(project__slug=project)
    return qs.select_related("project", "world", "world_revision").distinct()


def editable_projects(*, user: User) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    return Project.objects.filter(
        memberships__user_id=user.pk, memberships__role__in=EDIT_ROLES
    ).distinct()


def editable_worlds(*, user: User) -> QuerySet[World]:
    return world_list(user=user).filter(
        project__in=editable_projects(user=user), head__isnull=False
    )


def endpoints_for(*, project: Project) -> QuerySet[ModelEndpoint]:
    """The project's endpoints and the site-wide ones."""
    return ModelEndpoint.objects.filter(Q(project=project) | Q(project__isnull=True))


def start_groups(*, project: Project) -> list[dict[str, Any]]:
    """What an episode or a rollout can start from, one group per domain in the registry's
    order, titled by the registry, with scenarios before bare worlds: a scenario is the usual
    start and a flat list mixing seven domains is hard to scan. A world of a domain that is no longer
    registered still gets a group, under the domain's bare name, so it stays startable."""
    groups: dict[str, dict[str, Any]] = {
        name: {"title": get_domain(name).title, "items": []} for name in domain_names()
    }
    scenarios = Scenario.objects.filter(project=project, archived=False).select_related("world")
    worlds = World.objects.filter(project=project, archived=False, head__isnull=False)
    for scenario in scenarios.order_by("title", "pk"):
        group = groups.setdefault(scenario.domain, {"title": scenario.domain, "items": []})
        group["items"].append({"value": f"scenario:{scenario.pk}", "label": scenario.title})
    for world in worlds.order_by("title", "pk"):
        group = groups.setdefault(world.domain, {"title": world.domain, "items": []})
        group["items"].append({"value": f"world:{world.pk}", "label": f"{world.title} (world)"})
    return [group for group in groups.values() if group["items"]]


def pretty_spec(spec: Any) -> str:
    return json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False)


def revision_diff(*, old: WorldRevision, new: WorldRevision) -> list[tuple[str, str]]:
    """A unified diff of two revisions' pretty JSON, as (css class, line) pairs."""
    lines = difflib.unified_diff(
        pretty_spec(old.spec).splitlines(),
        pretty_spec(new.spec).splitlines(),
        fromfile=f"r{old.number}",
        tofile=f"r{new.number}",
        lineterm="",
    )
    rows = []
    for line in lines:
        if line.startswith(("+++", "---")):
            css = "muted"
        elif line.startswith("+"):
            css = "diff-add"
        elif line.startswith("-"):
            css = "diff-del"
        elif line.startswith("@@"):
            css = "muted"
        else:
            css = ""
        rows.append((css, line))
    return rows


@dataclass(frozen=True)
class PromptPreview:
    layout: PromptLayout
    messages: list[Message]
    tokens: int
    action: str
    placeholder: bool
    instructions: list[str]
    enforced: list[str]


def scenario_prompt_preview(*, scenario: Scenario) -> PromptPreview:
    """Exactly the request the world model receives at step 1 (plus what is enforced after)."""
    world = scenario.world_revision.to_world()
    spec = ScenarioSpec.from_dict(scenario.spec)
    if spec.policy.kind == "scripted" and spec.policy.actions:
        action, placeholder = spec.policy.actions[0], False
    else:
        # The domain's example action when nothing scripts one: what the preview sends.
        action, placeholder = domain_for(world).first_action(world), True
    perturbations: tuple[Perturbation, ...] = spec.perturbations
    ctx = StepContext(step=1, action=action, domain=world.domain, seed=spec.seed)
    indexes = firing_indexes(perturbations, ctx)
    firings = prompted_firings(perturbations, indexes, ctx)
    instructions = [str(f.details["instruction"]) for f in firings]
    enforced = [
        f"#{i + 1} {PERTURBATION_KINDS[perturbations[i].kind].title}"
        for i in indexes
        if perturbations[i].mode == "enforced"
    ]
    layout, template = request_layout(scenario.endpoint, world.domain)
    messages = build_messages(
        world,
        [],
        action,
        instructions=instructions,
        task=spec.task or None,
        layout=layout,
        system_template=template,
    )
    return PromptPreview(
        layout=layout,
        messages=messages,
        tokens=estimate_tokens(messages),
        action=action,
        placeholder=placeholder,
        instructions=instructions,
        enforced=enforced,
    )
