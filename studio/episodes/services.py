"""Writes on episodes and steps. Views, consumers, the API and rollouts call these.

The database is the source of truth: a step row exists (``pending``) before the
model is called, ``run_step`` claims it with a conditional UPDATE, and every
browser re-reads the rows when its socket (re)opens. Tasks are dispatched on
commit (``studio.lib.tasks.dispatch``), never from inside a transaction that
could still roll back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Any, TypeVar

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Exists, F, OuterRef, QuerySet, Subquery
from django.utils import timezone

from simulator.errors import InvalidAction, InvalidPerturbation
from simulator.perturbations import Perturbation
from simulator.prompting import domain_for
from studio.core.models import ModelEndpoint, Project
from studio.episodes.models import (
    Episode,
    EpisodeStatus,
    RunStatus,
    Step,
    StepStatus,
)
from studio.errors import Busy, Closed, RejectedInput
from studio.lib.channels import PROGRESS, STEP, send_to_group
from studio.lib.compiled import CompiledQuery
from studio.lib.db import Priority, db_call
from studio.lib.inbox import Inbox, addressed, listening
from studio.lib.tasks import dispatch
from studio.worlds.models import Scenario, WorldRevision

T = TypeVar("T")

User = AbstractBaseUser | AnonymousUser | None

BUSY = (StepStatus.PENDING, StepStatus.RUNNING)
AGENT_KINDS = ("human", "scripted", "replay", "llm")


class EpisodeBusy(Busy):
    """A step of this episode is pending or running: one step at a time."""

    code = "episode_busy"


class EpisodeClosed(Closed):
    """The episode is closed (or done): it takes no more steps."""

    code = "episode_closed"


def _user(user: User) -> Any:
    return user if user is not None and user.is_authenticated else None


def validate_perturbations(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each dict as ``Perturbation.to_dict()`` writes it; raises InvalidPerturbation."""
    return [Perturbation.from_dict(item).to_dict() for item in items]


def validate_agent(agent: dict[str, Any] | None) -> dict[str, Any]:
    """The agent policy dict: ``{"kind": "human"}`` when none; raises RejectedInput when
    malformed."""
    agent = dict(agent or {"kind": "human"})
    kind = agent.setdefault("kind", "human")
    if kind not in AGENT_KINDS:
        raise RejectedInput(f"agent kind must be one of {', '.join(AGENT_KINDS)}, not {kind!r}")
    actions = agent.get("actions", [])
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise RejectedInput("agent actions must be a list of text")
    if kind in ("scripted", "replay") and not actions:
        raise RejectedInput(f"a {kind} agent needs a list of actions")
    return agent


def episode_create(
    *,
    project: Project,
    user: User = None,
    scenario: Scenario | None = None,
    world_revision: WorldRevision | None = None,
    seed: int = 0,
    agent: dict[str, Any] | None = None,
    source: str = "ui",
    title: str = "",
    perturbations: list[dict[str, Any]] | None = None,
    endpoint: ModelEndpoint | None = None,
) -> Episode:
    """A new episode from a scenario (its revision, task, perturbations, agent, endpoint and
    sampling are copied) or from a bare world revision. Explicit arguments win over the
    scenario's. Raises RejectedInput (mismatched project, nothing to start from) and
    InvalidPerturbation."""
    if scenario is not None:
        if scenario.project_id != project.pk:
            raise RejectedInput("the scenario belongs to another project")
        world_revision = world_revision or scenario.world_revision
        spec = scenario.spec or {}
        task = str(spec.get("task", ""))
        if perturbations is None:
            perturbations = list(spec.get("perturbations", []))
        if agent is None and spec.get("policy"):
            agent = dict(spec["policy"])
        endpoint = endpoint or scenario.endpoint
        sampling = dict(spec.get("sampling") or {})
        if not seed:
            seed = int(spec.get("seed", 0) or 0)
        title = title or scenario.title
    else:
        task, sampling = "", {}
    if world_revision is None:
        raise RejectedInput("an episode needs a scenario or a world revision")
    if world_revision.world.project_id != project.pk:
        raise RejectedInput("the world belongs to another project")
    if endpoint is not None and endpoint.project_id not in (None, project.pk):
        raise RejectedInput("the endpoint belongs to another project")
    world = world_revision.world
    return Episode.objects.create(
        project=project,
        scenario=scenario,
        world_revision=world_revision,
        title=title or f"{world.title} episode",
        domain=world.domain,
        task=task,
        perturbations=validate_perturbations(perturbations or []),
        seed=seed,
        agent=validate_agent(agent),
        endpoint=endpoint,
        sampling=sampling,
        source=source,
        created_by=_user(user),
    )


@CompiledQuery
def _submit_state(episode_id: int) -> QuerySet[Any, Any]:
    """Only what may have changed since the caller read the episode, and its steps'
    state, in one query; the world revision it loaded stays (a full refresh would cost a
    query more)."""
    steps = Step.objects.filter(episode=OuterRef("pk"))
    return (
        Episode.objects.filter(pk=episode_id)
        .values("status", "next_perturbations")
        .annotate(
            last=Subquery(steps.order_by("-index").values("index")[:1]),
            busy=Exists(steps.filter(status__in=BUSY)),
        )
    )


def step_submit(
    *,
    episode: Episode,
    action: str,
    extra_perturbations: list[dict[str, Any]] | None = None,
    user: User = None,
) -> Step:
    """Validate ``action`` with the domain and queue it as the next step.

    Raises InvalidAction, InvalidPerturbation, EpisodeClosed, or EpisodeBusy when a
    step is pending/running (two racing submits: ``unique(episode, index)`` refuses one).
    Perturbations queued for the next step on the episode page are added and consumed.
    """
    now: dict[str, Any] = _submit_state.get(episode.pk)
    episode.status, episode.next_perturbations = now["status"], now["next_perturbations"]
    if episode.status != EpisodeStatus.ACTIVE:
        raise EpisodeClosed(f"episode {episode.pk} is {episode.status}")
    if not action.strip():
        raise InvalidAction("the action is empty")
    world = episode.world_revision.to_world()
    domain_for(world).parse_action(action, world)
    extras = validate_perturbations([*(extra_perturbations or []), *episode.next_perturbations])
    if now["busy"]:
        raise EpisodeBusy("a step of this episode is still running")
    try:
        # A transaction only when there are queued perturbations to consume with it.
        with transaction.atomic() if episode.next_perturbations else contextlib.nullcontext():
            step = Step.objects.create(
                episode=episode,
                index=int(now["last"] or 0) + 1,
                action=action,
                extra_perturbations=extras,
                dispatched_at=timezone.now(),
            )
            if episode.next_perturbations:
                Episode.objects.filter(pk=episode.pk).update(next_perturbations=[])
    except IntegrityError:
        raise EpisodeBusy("another step was submitted at the same time") from None
    dispatch_step(step.pk)
    publish_step(step)
    return step


def dispatch_step(step_id: int) -> None:
    """Send the step's task (its row's ``dispatched_at`` says when, for the sweep)."""
    # A real cycle: the tasks call this module's services.
    from studio.episodes.tasks import run_step

    dispatch(run_step, step_id)


def step_retry(*, step: Step) -> Step:
    """Run a failed or cancelled step again (same row, attempts kept).

    Only the episode's last step can be retried (a later one was built on its
    result): the checks and the change are one conditional UPDATE, so a refused
    retry changes nothing and never leaves the episode busy.
    """
    later = Step.objects.filter(episode_id=step.episode_id, index__gt=step.index)
    changed = (
        Step.objects.filter(pk=step.pk, status__in=(StepStatus.FAILED, StepStatus.CANCELLED))
        .exclude(Exists(later))
        .update(
            status=StepStatus.PENDING,
            error="",
            error_kind="",
            cancel_requested=False,
            partial_observation="",
            partial_reasoning="",
            partial_seq=0,
            finished_at=None,
            dispatched_at=timezone.now(),
        )
    )
    step.refresh_from_db()
    if not changed:
        if later.exists():
            raise RejectedInput("only the last step can be retried; fork the episode instead")
        raise RejectedInput(f"step {step.index} is {step.status}: only failed steps are retried")
    dispatch_step(step.pk)
    publish_step(step)
    return step


def step_cancel(*, step: Step) -> None:
    """Stop a step: a pending one is cancelled at once; a running one's task sees the flag
    (it polls it about once a second) and closes the model stream."""
    Step.objects.filter(pk=step.pk, status=StepStatus.PENDING).update(
        status=StepStatus.CANCELLED, finished_at=timezone.now(), error="Cancelled before it ran."
    )
    Step.objects.filter(pk=step.pk, status=StepStatus.RUNNING).update(cancel_requested=True)
    step.refresh_from_db()
    if step.status == StepStatus.CANCELLED:
        publish_step(step)


def episode_fork(*, episode: Episode, at_step: int, user: User = None) -> Episode:
    """A new episode whose history is ``episode``'s done steps 1..at_step (0: none)."""
    steps = list(episode.steps.filter(index__lte=at_step).order_by("index"))
    if at_step < 0 or len(steps) != at_step or any(s.status != StepStatus.DONE for s in steps):
        raise RejectedInput(f"cannot fork at step {at_step}: steps 1..{at_step} must all be done")
    with transaction.atomic():
        fork = Episode.objects.create(
            project=episode.project,
            scenario=episode.scenario,
            world_revision=episode.world_revision,
            title=f"{episode.title} (fork at {at_step})",
            domain=episode.domain,
            task=episode.task,
            perturbations=list(episode.perturbations),
            disabled_perturbations=list(episode.disabled_perturbations),
            seed=episode.seed,
            agent=dict(episode.agent),
            endpoint=episode.endpoint,
            sampling=dict(episode.sampling),
            source=episode.source,
            parent=episode,
            forked_at_step=at_step,
            created_by=_user(user),
        )
        copied = [
            "index",
            "action",
            "status",
            "observation",
            "reasoning",
            "raw_output",
            "extra_perturbations",
            "firings",
            "verifiers",
            "telemetry",
            "reward",
            "terminated",
            "attempts",
            "started_at",
            "finished_at",
        ]
        Step.objects.bulk_create(
            Step(episode=fork, **{name: getattr(s, name) for name in copied}) for s in steps
        )
    return fork


def episode_close(*, episode: Episode) -> None:
    """Close the episode: no more steps; a running step is cancelled, the agent stopped."""
    Episode.objects.filter(pk=episode.pk).update(
        status=EpisodeStatus.CLOSED, run_status=RunStatus.IDLE, run_remaining=0
    )
    for step in episode.steps.filter(status__in=BUSY):
        step_cancel(step=step)
    episode.refresh_from_db()
    publish_episode(episode)


def episode_update(*, episode: Episode, **fields: Any) -> None:
    """Save changed fields (live control) and tell the page."""
    Episode.objects.filter(pk=episode.pk).update(**fields)
    episode.refresh_from_db()
    publish_episode(episode)


def perturbation_add(*, episode: Episode, perturbation: dict[str, Any], next_only: bool) -> None:
    """Add a perturbation to the episode, or queue it for the next step only."""
    (clean,) = validate_perturbations([perturbation])
    if next_only:
        episode_update(episode=episode, next_perturbations=[*episode.next_perturbations, clean])
    else:
        episode_update(episode=episode, perturbations=[*episode.perturbations, clean])


def perturbation_toggle(*, episode: Episode, index: int) -> None:
    """Switch perturbation ``index`` off (or back on) for the following steps."""
    if not 0 <= index < len(episode.perturbations):
        raise InvalidPerturbation(f"no perturbation {index}")
    disabled = set(episode.disabled_perturbations)
    disabled ^= {index}
    episode_update(episode=episode, disabled_perturbations=sorted(disabled))


def active_perturbations(episode: Episode) -> list[dict[str, Any]]:
    off = set(episode.disabled_perturbations)
    return [p for i, p in enumerate(episode.perturbations) if i not in off]


# --- The automatic agent: run N steps, pause, stop -------------------------------------


def agent_run(*, episode: Episode, steps: int) -> None:
    """Let the episode's agent take up to ``steps`` steps, one after another."""
    if episode.agent.get("kind", "human") == "human":
        raise RejectedInput("a human agent is driven from the composer")
    if episode.status != EpisodeStatus.ACTIVE:
        raise EpisodeClosed(f"episode {episode.pk} is {episode.status}")
    episode_update(episode=episode, run_status=RunStatus.RUNNING, run_remaining=max(steps, 0))
    from studio.episodes.tasks import agent_step  # a real cycle, as in dispatch_step

    dispatch(agent_step, episode.pk)


def agent_pause(*, episode: Episode) -> None:
    """Stop after the current step; ``agent_run`` resumes."""
    episode_update(episode=episode, run_status=RunStatus.PAUSED)


def agent_stop(*, episode: Episode) -> None:
    """Stop now: no more steps, and the running one is cancelled."""
    episode_update(episode=episode, run_status=RunStatus.IDLE, run_remaining=0)
    for step in episode.steps.filter(status__in=BUSY):
        step_cancel(step=step)


def agent_claim_turn(*, episode: Episode) -> bool:
    """Take one of the remaining steps (conditional UPDATE: a duplicate task gets none)."""
    taken = Episode.objects.filter(
        pk=episode.pk, run_status=RunStatus.RUNNING, run_remaining__gt=0
    ).update(run_remaining=F("run_remaining") - 1)
    return taken == 1


# --- Publishing to the episode's group ------------------------------------------------


def step_messages(step: Step, seq: int, *, final: bool) -> list[tuple[str, dict[str, Any]]]:
    """The (group, message) pairs that say a step changed: to the pages' group always,
    and, once it has ended, to its step-ends group too (what env API waits listen to)."""
    message = {"type": STEP, "step_id": step.pk, "seq": seq, "final": final}
    sends = [(Episode.group_for(step.episode_id), message)]
    if final:
        ends = Episode.step_ends_group_for(step.episode_id)
        sends.append((ends, addressed(ends, message)))
    return sends


def publish_step(step: Step) -> None:
    """Tell every browser on the episode to re-render this step (from the database)."""
    for group, message in step_messages(step, step.partial_seq, final=step.status in FINISHED):
        send_to_group(group, message)


def publish_episode(episode: Episode) -> None:
    """Tell every browser to re-render the episode's controls (status, perturbations, agent)."""
    send_to_group(episode.group_name, {"type": PROGRESS})


# --- Waiting for a step (the environment API) -----------------------------------------

FINISHED = (StepStatus.DONE, StepStatus.FAILED, StepStatus.CANCELLED)
#: The longest pause between two reads of a waited-for step: its final message on the
#: channel layer wakes the wait at once; the reads only cover a message that was lost.
MAX_POLL_S = 5.0


async def step_wait(
    step_id: int, timeout: float, *, group: str = "", inbox: Inbox | None = None
) -> Step:
    """The step once it is done, failed or cancelled, or as it stands after ``timeout``.

    Listens to the episode's step-ends group (:meth:`Episode.step_ends_group_for`;
    wakes at once on the step's final message) and also re-reads the row every
    ``MAX_POLL_S``, so it works whatever the channel layer does (embedded, Redis, or a
    message dropped over capacity). The re-reads are only insurance: at one a second
    they were a read per step for any step that took over a second (most, with a model
    that reasons first), on a database every step already visits several times. Given
    the ``group``, it joins before its first read, so a step that ends in between is
    still seen and no read is spent on finding the group. Given an ``inbox`` that was
    already listening before the step was submitted (:func:`studio.lib.inbox.listening`),
    the step's end cannot have been missed, so it does not read the row until a message
    or a poll says to. A read that finds the connection pool busy is simply tried again
    at the next poll: the step runs on regardless, and failing the wait would make the
    client send it again.
    """
    if inbox is not None:
        return await _wait_listening(step_id, timeout, inbox, read_first=False)
    if not group:
        step = await _read_waited_step(step_id, None, time.monotonic() + timeout)
        if step.status in FINISHED:
            return step
        group = Episode.step_ends_group_for(step.episode_id)
    async with listening(group) as joined:
        return await _wait_listening(step_id, timeout, joined, read_first=True)


@CompiledQuery
def step_by_id(step_id: int) -> QuerySet[Step]:
    """A step's row alone: what a wait reads, once per waited step."""
    return Step.objects.filter(pk=step_id)


async def _read_waited_step(step_id: int, last: Step | None, give_up: float) -> Step:
    """The step's row; on a busy pool the last one read, or a retry until ``give_up``."""

    def read_step() -> Step:
        return step_by_id.get(step_id)

    while True:
        try:
            return await db_call(read_step, priority=Priority.WAIT)
        except OperationalError:
            if last is not None:
                return last
            if time.monotonic() > give_up:
                raise
            await asyncio.sleep(1)


async def _wait_listening(
    step_id: int, timeout: float, inbox: Inbox | None, *, read_first: bool
) -> Step:
    deadline = time.monotonic() + timeout
    delay = MAX_POLL_S if inbox is not None else 0.05
    last: Step | None = None
    if inbox is not None and not read_first:  # the first look is a message, or the first poll
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_step_ended(inbox, step_id), delay)
    while True:
        last = await _read_waited_step(step_id, last, deadline)
        left = deadline - time.monotonic()
        if last.status in FINISHED or left <= 0:
            return last
        wait = min(delay, left)
        if inbox is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_step_ended(inbox, step_id), wait)
        else:
            await asyncio.sleep(wait)
        delay = min(delay * 2, MAX_POLL_S)


async def _step_ended(inbox: Inbox, step_id: int) -> None:
    while (await inbox.get()).get("step_id") != step_id:
        pass
