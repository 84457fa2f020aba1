"""Writes for worlds, revisions, scenarios and bundles. Views call these, never the ORM."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Max

from simulator.formats.bundle import Bundle, dump_bundle, validate_bundle
from simulator.perturbations import PERTURBATION_KINDS
from simulator.scenario import Scenario as ScenarioSpec
from simulator.scenario import ScenarioError
from simulator.world import World as WorldSpec
from studio.core.models import ModelEndpoint, Project
from studio.errors import RejectedInput
from studio.worlds.models import Scenario, World, WorldRevision

User = AbstractBaseUser | AnonymousUser


class BundleRejected(RejectedInput):
    """A bundle that cannot be imported; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def _user(user: User | None) -> Any:
    return user if user is not None and user.is_authenticated else None


@transaction.atomic
def world_save(
    *, world: World, spec: Mapping[str, Any], user: User | None = None, note: str = ""
) -> tuple[WorldRevision, bool]:
    """Make ``spec`` the world's head; a new revision only when the content changed."""
    checked = WorldSpec.from_dict(spec)
    content_hash = checked.content_hash()
    world = World.objects.select_for_update().get(pk=world.pk)
    head = world.head
    if head is not None and head.content_hash == content_hash:
        return head, False
    number = (world.revisions.aggregate(n=Max("number"))["n"] or 0) + 1
    revision = WorldRevision.objects.create(
        world=world,
        number=number,
        spec=checked.to_dict(),
        content_hash=content_hash,
        note=note,
        created_by=_user(user),
    )
    world.head = revision
    world.title = checked.title
    world.save(update_fields=["head", "title", "updated_at"])
    return revision, True


@transaction.atomic
def world_create(*, project: Project, spec: Mapping[str, Any], user: User | None = None) -> World:
    checked = WorldSpec.from_dict(spec)
    world = World.objects.create(
        project=project, title=checked.title, domain=checked.domain, created_by=_user(user)
    )
    world_save(world=world, spec=checked.to_dict(), user=user, note="created")
    world.refresh_from_db()
    return world


def world_duplicate(*, world: World, user: User | None = None) -> World:
    assert world.head is not None
    spec = dict(world.head.spec)
    spec["title"] = f"{world.title} (copy)"
    return world_create(project=world.project, spec=spec, user=user)


def world_set_archived(*, world: World, archived: bool) -> World:
    world.archived = archived
    world.save(update_fields=["archived", "updated_at"])
    return world


def default_scenario_spec(title: str) -> dict[str, Any]:
    return ScenarioSpec(title=title).to_dict()


def scenario_create(*, world: World, title: str, user: User | None = None) -> Scenario:
    assert world.head is not None
    return Scenario.objects.create(
        project=world.project,
        world=world,
        world_revision=world.head,
        title=title,
        spec=default_scenario_spec(title),
        created_by=_user(user),
    )


def scenario_update(
    *,
    scenario: Scenario,
    changes: Mapping[str, Any],
    world_revision: WorldRevision | None = None,
    endpoint: ModelEndpoint | None | bool = False,
) -> Scenario:
    """Merge ``changes`` into the spec, validate the whole, save; :class:`ScenarioError` if invalid.

    ``endpoint=False`` leaves the world-model endpoint as it is; None means the default.
    """
    spec = {**scenario.spec, **changes}
    checked = ScenarioSpec.from_dict(spec)
    scenario.spec = checked.to_dict()
    scenario.title = checked.title
    fields = ["spec", "title", "updated_at"]
    if world_revision is not None:
        if world_revision.world_id != scenario.world_id:
            raise ScenarioError(["world_revision: belongs to another world"])
        scenario.world_revision = world_revision
        fields.append("world_revision")
    if endpoint is not False:
        scenario.endpoint = endpoint if isinstance(endpoint, ModelEndpoint) else None
        fields.append("endpoint")
    scenario.save(update_fields=fields)
    return scenario


def perturbation_defaults(kind: str) -> dict[str, Any]:
    info = PERTURBATION_KINDS[kind]
    return {
        "kind": kind,
        "mode": info.modes[-1],
        "params": {p.name: p.default for p in info.params},
        "trigger": {
            "first_step": 1,
            "last_step": None,
            "action_pattern": None,
            "tool": None,
            "probability": 1.0,
            "seed": 0,
        },
        "label": "",
    }


def scenario_perturbation_add(*, scenario: Scenario, kind: str) -> Scenario:
    if kind not in PERTURBATION_KINDS:
        raise ScenarioError([f"kind: unknown kind {kind!r}"])
    items = [*scenario.spec.get("perturbations", []), perturbation_defaults(kind)]
    return scenario_update(scenario=scenario, changes={"perturbations": items})


def scenario_perturbation_update(
    *, scenario: Scenario, index: int, data: Mapping[str, Any]
) -> Scenario:
    items = list(scenario.spec.get("perturbations", []))
    items[index] = dict(data)
    return scenario_update(scenario=scenario, changes={"perturbations": items})


def scenario_perturbation_remove(*, scenario: Scenario, index: int) -> Scenario:
    items = list(scenario.spec.get("perturbations", []))
    del items[index]
    return scenario_update(scenario=scenario, changes={"perturbations": items})


def scenario_perturbation_move(*, scenario: Scenario, index: int, offset: int) -> Scenario:
    items = list(scenario.spec.get("perturbations", []))
    target = index + offset
    if 0 <= target < len(items):
        items[index], items[target] = items[target], items[index]
    return scenario_update(scenario=scenario, changes={"perturbations": items})


def scenario_duplicate(*, scenario: Scenario, user: User | None = None) -> Scenario:
    title = f"{scenario.title} (copy)"
    return Scenario.objects.create(
        project=scenario.project,
        world=scenario.world,
        world_revision=scenario.world_revision,
        title=title,
        spec={**scenario.spec, "title": title},
        endpoint=scenario.endpoint,
        created_by=_user(user),
    )


def scenario_set_archived(*, scenario: Scenario, archived: bool) -> Scenario:
    scenario.archived = archived
    scenario.save(update_fields=["archived", "updated_at"])
    return scenario


def bundle_export(*, scenario: Scenario) -> str:
    """The scenario and its pinned world revision as a versioned bundle document."""
    bundle = Bundle(scenario.world_revision.to_world(), ScenarioSpec.from_dict(scenario.spec))
    return dump_bundle(bundle)


@transaction.atomic
def bundle_import(
    *, project: Project, text: str, user: User | None = None, skip_existing: bool = False
) -> tuple[Scenario, bool]:
    """Create a world (or reuse an identical one) and a scenario from a bundle.

    Every problem is reported at once (:class:`BundleRejected`) and nothing is saved.
    With ``skip_existing``, a scenario with the same spec on an identical world
    revision is returned instead of a new copy (so loading examples is idempotent).
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BundleRejected([f"bundle: invalid JSON ({exc})"]) from None
    problems = validate_bundle(data)
    if problems:
        raise BundleRejected(problems)
    world_spec = WorldSpec.from_dict(data["world"])
    scenario_spec = ScenarioSpec.from_dict(data["scenario"])
    content_hash = world_spec.content_hash()
    revision = (
        WorldRevision.objects.filter(world__project=project, content_hash=content_hash)
        .select_related("world")
        .order_by("world_id", "number")
        .first()
    )
    if skip_existing and revision is not None:
        existing = Scenario.objects.filter(
            project=project, world_revision=revision, title=scenario_spec.title
        ).first()
        if existing is not None and existing.spec == scenario_spec.to_dict():
            return existing, False
    if revision is None:
        world = world_create(project=project, spec=world_spec.to_dict(), user=user)
        assert world.head is not None
        revision = world.head
    return (
        Scenario.objects.create(
            project=project,
            world=revision.world,
            world_revision=revision,
            title=scenario_spec.title,
            spec=scenario_spec.to_dict(),
            created_by=_user(user),
        ),
        True,
    )
