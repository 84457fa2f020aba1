"""Annotation queues: which simulated turns go to whom, and how far each annotator is.

A queue takes the simulated turns of a scope (a simulation, a domain, or the whole
project), and gives each one to ``annotators_per_item`` different annotators, the
least loaded first, so the work is spread evenly and every item can be compared
between people. The database refuses a second assignment of one item to one
person (``one_assignment_per_item_per_user``) and a second item for one turn
(``one_queue_item_per_turn``); planning never asks for either, and a refresh that
races another only meets those constraints, never a duplicate.

An assignment is done when its annotator has given the turn a verdict or a
corrected observation: the :class:`~studio.traces.models.Annotation` is the record
of the work, so annotating from the review page and from the queue is one thing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from studio.core.access import EDIT_ROLES
from studio.core.models import Membership, Project
from studio.errors import NotFound, RejectedInput
from studio.traces.models import (
    Annotation,
    AnnotationQueue,
    QueueAssignment,
    QueueItem,
    SimulatedTurn,
    Simulation,
)

SCOPE_KEYS = ("simulation", "domain")


# ── Scope ───────────────────────────────────────────────────────────────────────


def scope_turns(*, project: Project, scope: dict[str, Any]) -> QuerySet[SimulatedTurn]:
    """The simulated turns a scope covers, oldest simulation first (empty observations left out)."""
    turns = SimulatedTurn.objects.filter(simulation__project=project).exclude(observation="")
    if scope.get("simulation"):
        turns = turns.filter(simulation_id=scope["simulation"])
    if scope.get("domain"):
        turns = turns.filter(simulation__trace__domain=scope["domain"])
    return turns.order_by("simulation__created_at", "simulation_id", "index")


def _clean_scope(project: Project, scope: dict[str, Any]) -> dict[str, Any]:
    unknown = set(scope) - set(SCOPE_KEYS)
    if unknown:
        raise RejectedInput(f"a queue's scope takes {', '.join(SCOPE_KEYS)}, not {sorted(unknown)}")
    clean: dict[str, Any] = {}
    if scope.get("simulation"):
        simulation_id = str(scope["simulation"])
        if (
            not simulation_id.isdigit()
            or not Simulation.objects.filter(pk=int(simulation_id), project=project).exists()
        ):
            raise NotFound("No such simulation in this project")
        clean["simulation"] = int(simulation_id)
    if scope.get("domain"):
        clean["domain"] = str(scope["domain"])[:40]
    return clean


# ── Planning ────────────────────────────────────────────────────────────────────


def plan_assignments(
    items: Sequence[int],
    annotators: Sequence[int],
    *,
    per_item: int,
    held: dict[int, set[int]] | None = None,
) -> list[tuple[int, int]]:
    """(item, annotator) pairs that give every item ``per_item`` distinct annotators.

    ``held`` is who already holds each item (their share counts towards the load
    and they are never picked for it again). Each item goes to the annotators with
    the fewest assignments so far, ties to the one listed first, so loads stay
    within one of each other.
    """
    held = held or {}
    load = Counter(dict.fromkeys(annotators, 0))
    for holders in held.values():
        load.update(user for user in holders if user in load)
    rank = {user: position for position, user in enumerate(annotators)}
    planned = []
    for item in items:
        holders = held.get(item, set())
        needed = per_item - len(holders)
        free = sorted((u for u in annotators if u not in holders), key=lambda u: (load[u], rank[u]))
        for user in free[: max(needed, 0)]:
            planned.append((item, user))
            load[user] += 1
    return planned


# ── Writes ──────────────────────────────────────────────────────────────────────


def _annotators(project: Project, users: Iterable[User]) -> list[User]:
    """The users, each once, checked to be members who may annotate (owners and editors)."""
    chosen: dict[int, User] = {}
    for user in users:
        chosen.setdefault(user.pk, user)
    allowed = set(
        Membership.objects.filter(
            project=project, user_id__in=chosen, role__in=EDIT_ROLES
        ).values_list("user_id", flat=True)
    )
    refused = [user.get_username() for pk, user in chosen.items() if pk not in allowed]
    if refused:
        raise RejectedInput(
            f"only the project's owners and editors can annotate: not {', '.join(sorted(refused))}"
        )
    return list(chosen.values())


def queue_create(
    *,
    project: Project,
    name: str,
    annotators: Iterable[User],
    annotators_per_item: int = 1,
    scope: dict[str, Any] | None = None,
    description: str = "",
    user: AbstractBaseUser | AnonymousUser | None = None,
) -> AnnotationQueue:
    """A queue over the scope's turns, each given to ``annotators_per_item`` of ``annotators``."""
    name = name.strip()
    if not name:
        raise RejectedInput("a queue needs a name")
    if AnnotationQueue.objects.filter(project=project, name=name).exists():
        raise RejectedInput(f"the project already has a queue called {name!r}")
    people = _annotators(project, annotators)
    if not people:
        raise RejectedInput("choose at least one annotator")
    if not 1 <= annotators_per_item <= len(people):
        raise RejectedInput(
            f"each item can go to 1 to {len(people)} annotators (the number chosen), "
            f"not {annotators_per_item}"
        )
    with transaction.atomic():
        queue = AnnotationQueue.objects.create(
            project=project,
            name=name[:120],
            description=description,
            scope=_clean_scope(project, scope or {}),
            annotators_per_item=annotators_per_item,
            created_by=user if isinstance(user, User) else None,
        )
        queue.annotators.set(people)
        queue_refresh(queue=queue)
    return queue


def queue_refresh(*, queue: AnnotationQueue) -> int:
    """Add the scope's turns that are not in the queue yet and assign whatever is short of
    annotators; returns how many items were added. Safe to run at any time, and twice."""
    with transaction.atomic():
        # One planner at a time per queue: loads are read, then written.
        AnnotationQueue.objects.select_for_update().filter(pk=queue.pk).first()
        present = set(queue.items.values_list("simulated_turn_id", flat=True))
        turn_ids = scope_turns(project=queue.project, scope=queue.scope).values_list(
            "pk", flat=True
        )
        new = [QueueItem(queue=queue, simulated_turn_id=t) for t in turn_ids if t not in present]
        QueueItem.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
        items = list(queue.items.order_by("id").values_list("pk", flat=True))
        held: dict[int, set[int]] = {}
        for item_id, user_id in QueueAssignment.objects.filter(item__queue=queue).values_list(
            "item_id", "user_id"
        ):
            held.setdefault(item_id, set()).add(user_id)
        annotators = list(queue.annotators.order_by("id").values_list("pk", flat=True))
        planned = plan_assignments(items, annotators, per_item=queue.annotators_per_item, held=held)
        QueueAssignment.objects.bulk_create(
            [QueueAssignment(item_id=i, user_id=u) for i, u in planned],
            ignore_conflicts=True,
            batch_size=1000,
        )
    return len(new)


# ── Reads ───────────────────────────────────────────────────────────────────────


def _done() -> Exists:
    """Whether an assignment's annotator has settled its turn (a verdict or a correction)."""
    settled = Annotation.objects.filter(
        simulated_turn_id=OuterRef("item__simulated_turn_id"), user_id=OuterRef("user_id")
    ).filter(~Q(verdict="") | ~Q(corrected_observation=""))
    return Exists(settled)


def queue_list(*, project: Project) -> QuerySet[AnnotationQueue]:
    return AnnotationQueue.objects.filter(project=project).annotate(
        item_count=Count("items", distinct=True)
    )


def next_assignment(
    *, queue: AnnotationQueue, user: AbstractBaseUser | AnonymousUser
) -> QueueAssignment | None:
    """The user's first unfinished item in the queue, in the queue's order."""
    if not user.is_authenticated:
        return None
    return (
        QueueAssignment.objects.filter(item__queue=queue, user_id=user.pk)
        .annotate(done=_done())
        .filter(done=False)
        .select_related("item__simulated_turn")
        .order_by("item_id")
        .first()
    )


@dataclass(frozen=True)
class Progress:
    """One annotator's share of a queue."""

    user: User
    assigned: int
    done: int

    @property
    def percent(self) -> int:
        return self.done * 100 // self.assigned if self.assigned else 0


def annotator_progress(*, queue: AnnotationQueue) -> list[Progress]:
    """Every annotator of the queue with how many items they hold and have finished."""
    counts = (
        QueueAssignment.objects.filter(item__queue=queue)
        .annotate(done=_done())
        .values("user_id")
        .annotate(assigned=Count("id"), finished=Count("id", filter=Q(done=True)))
    )
    by_user = {row["user_id"]: (row["assigned"], row["finished"]) for row in counts}
    return [
        Progress(user, *by_user.get(user.pk, (0, 0)))
        for user in queue.annotators.order_by("username")
    ]


def queue_for(*, user: AbstractBaseUser | AnonymousUser, queue_id: str) -> AnnotationQueue | None:
    """The queue named in a link (``?queue=``) if the user may see it, else None."""
    if not queue_id.isdigit() or not user.is_authenticated:
        return None
    return AnnotationQueue.objects.filter(
        pk=int(queue_id), project__memberships__user_id=user.pk
    ).first()
