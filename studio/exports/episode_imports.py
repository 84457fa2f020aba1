"""Trajectory, SFT and bundle records into episodes and scenarios (the import service's
episode side; :mod:`studio.exports.importing` detects the format and calls these).

Checks list every problem as a :class:`~simulator.errors.FormatError` with its line;
the importers run only on records the checks passed. What the studio's own exports
carry is restored exactly (see :mod:`studio.exports.records`), so export → import →
export gives the same bytes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict
from datetime import datetime
from functools import cache
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from simulator.domains import domain_names, get_domain
from simulator.episode import Turn
from simulator.errors import FormatError, SimulatorError
from simulator.formats._jsonl import json_lines
from simulator.formats.bundle import validate_bundle
from simulator.formats.sft import SftRecord, iter_sft
from simulator.formats.trajectory import EpisodeRecord, iter_trajectories
from simulator.prompting import system_message
from simulator.world import World as WorldSpec
from studio.core.models import Project
from studio.episodes.models import Episode, EpisodeSource, EpisodeStatus, Step, StepStatus
from studio.exports.models import Collection, CollectionItem, ItemKind
from studio.exports.records import STUDIO_KEY, SYSTEM_PROMPT_KEY, request_messages
from studio.worlds.models import Scenario, WorldRevision
from studio.worlds.services import bundle_import, world_create

User = AbstractBaseUser | AnonymousUser | None
Lines = Callable[[], Iterator[str]]
MAX_PROBLEMS = 200
FALLBACK_DOMAIN = "mcp"


def acting_user(user: User) -> Any:
    """The signed-in user to record as creator; None for the command line."""
    return user if user is not None and user.is_authenticated else None


def revision_for(project: Project, spec: WorldSpec, user: User) -> WorldRevision:
    """An identical world revision of the project, or a new world holding ``spec``."""
    revision = (
        WorldRevision.objects.filter(world__project=project, content_hash=spec.content_hash())
        .select_related("world")
        .order_by("world_id", "number")
        .first()
    )
    if revision is not None:
        return revision
    world = world_create(project=project, spec=spec.to_dict(), user=acting_user(user))
    assert world.head is not None
    return world.head


@cache
def _domain_openings() -> tuple[tuple[str, str], ...]:
    openings = []
    for name in domain_names():
        prompt = get_domain(name).system_prompt(WorldSpec(domain=name, title="x"))
        openings.append((name, prompt[:100]))
    return tuple(openings)


def _guess_domain(system_prompt: str) -> str:
    """The domain whose system prompt opens like this one; "unknown" when none does."""
    for name, opening in _domain_openings():
        if system_prompt.startswith(opening):
            return name
    return "unknown"


def _placeholder_world(project: Project, domain: str, label: str, user: User) -> WorldRevision:
    """A bare world for records that carry none (AgentWorldBench, SFT); a domain the studio
    does not know gets an mcp world (the episode keeps its own domain name)."""
    if domain not in domain_names():
        domain = FALLBACK_DOMAIN
    spec = WorldSpec(domain=domain, title=f"Imported {label} ({domain})")
    return revision_for(project, spec, user)


def _limited(problems: Iterator[FormatError]) -> list[FormatError]:
    """The first :data:`MAX_PROBLEMS` problems (and a note when there were more)."""
    found: list[FormatError] = []
    for problem in problems:
        if len(found) == MAX_PROBLEMS:
            found.append(FormatError(f"(stopped after {MAX_PROBLEMS} problems)"))
            break
        found.append(problem)
    return found


def check_sft(lines: Lines) -> list[FormatError]:
    return _limited(_sft_problems(lines))


def _sft_problems(lines: Lines) -> Iterator[FormatError]:
    for number, line in enumerate(lines(), start=1):
        if not line.strip():
            continue
        for item in iter_sft([line]):
            if isinstance(item, FormatError):
                yield FormatError(item.reason, line=number, field=item.field)
            else:
                for problem in _sft_shape(item):
                    yield FormatError(problem, line=number, field="messages")


def check_trajectories(lines: Lines) -> list[FormatError]:
    return _limited(e for e in iter_trajectories(lines()) if isinstance(e, FormatError))


def _sft_shape(record: SftRecord) -> list[str]:
    messages = list(record.messages)
    if messages and messages[0]["role"] == "system":
        messages = messages[1:]
    if len(messages) % 2:
        return ["needs user/assistant pairs after the system message"]
    for i, message in enumerate(messages):
        expected = "user" if i % 2 == 0 else "assistant"
        if message["role"] != expected:
            return [f"message {i + 1} after the system message should be {expected}"]
    if record.reasoning is not None and len(record.reasoning) != len(messages) // 2:
        return ["reasoning needs one entry per assistant message"]
    return []


def import_sft(
    project: Project, lines: Lines, user: User, collection: Collection
) -> tuple[int, int]:
    """One closed episode per conversation, in a bare world of the guessed domain;
    (episodes, steps)."""
    episodes = steps = 0
    for number, record in enumerate(iter_sft(lines()), start=1):
        assert isinstance(record, SftRecord)
        messages = list(record.messages)
        system = messages.pop(0)["content"] if messages[0]["role"] == "system" else ""
        domain = _guess_domain(system)
        revision = _placeholder_world(project, domain, "SFT", user)
        episode = Episode.objects.create(
            project=project,
            world_revision=revision,
            title=f"{collection.name} · conversation {number}",
            domain=domain,
            status=EpisodeStatus.CLOSED,
            metadata={SYSTEM_PROMPT_KEY: system},
            created_by=acting_user(user),
        )
        reasoning = record.reasoning or ()
        pairs = list(zip(messages[::2], messages[1::2], strict=True))
        Step.objects.bulk_create(
            Step(
                episode=episode,
                index=i,
                action=user_message["content"],
                status=StepStatus.DONE,
                observation=answer["content"],
                reasoning=reasoning[i - 1] if i - 1 < len(reasoning) else "",
            )
            for i, (user_message, answer) in enumerate(pairs, start=1)
        )
        CollectionItem.objects.create(
            collection=collection, kind=ItemKind.EPISODE, object_id=episode.pk
        )
        episodes += 1
        steps += len(pairs)
    return episodes, steps


def _scenario_for(
    project: Project, record: EpisodeRecord, revision: WorldRevision, user: User
) -> Scenario | None:
    if record.scenario is None:
        return None
    spec = record.scenario.to_dict()
    for scenario in Scenario.objects.filter(
        project=project, world_revision=revision, title=record.scenario.title
    ):
        if scenario.spec == spec:
            return scenario
    return Scenario.objects.create(
        project=project,
        title=record.scenario.title,
        world=revision.world,
        world_revision=revision,
        spec=spec,
        created_by=acting_user(user),
    )


def _choice(value: Any, choices: Any, default: str) -> str:
    return value if value in choices.values else default


def _kept(studio: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    """The exported value when the record carries one of the right type, else ``default``.

    An exported value comes back as it was, even an empty one (an episode with no
    agent set stays without one), so export → import → export gives the same bytes;
    the default is only for records the studio did not write.
    """
    value = studio.get(key)
    return value if isinstance(value, kind) else default


def import_trajectories(
    project: Project, lines: Lines, user: User, collection: Collection
) -> tuple[int, int]:
    """Each record as the episode it was exported from; (episodes, steps)."""
    episodes = steps = 0
    for record in iter_trajectories(lines()):
        assert isinstance(record, EpisodeRecord)
        revision = revision_for(project, record.world, user)
        metadata = dict(record.metadata)
        studio = metadata.pop(STUDIO_KEY, {})
        studio = studio if isinstance(studio, Mapping) else {}
        episode = Episode.objects.create(
            project=project,
            scenario=_scenario_for(project, record, revision, user),
            world_revision=revision,
            title=_kept(studio, "title", str, record.world.title)[:200],
            domain=_kept(studio, "domain", str, record.world.domain)[:40],
            task=record.task,
            perturbations=_kept(studio, "perturbations", list, []),
            seed=record.seed,
            agent=_kept(studio, "agent", dict, {"kind": "human"}),
            sampling=_kept(studio, "sampling", dict, {}),
            status=_choice(studio.get("status"), EpisodeStatus, EpisodeStatus.CLOSED),
            source=_choice(studio.get("source"), EpisodeSource, EpisodeSource.UI),
            metadata=metadata,
            created_by=acting_user(user),
        )
        created_at = studio.get("created_at")
        if isinstance(created_at, str):
            with contextlib.suppress(ValueError):
                Episode.objects.filter(pk=episode.pk).update(
                    created_at=datetime.fromisoformat(created_at)
                )
        try:
            system = system_message(record.world, record.task or None)
        except SimulatorError:  # an unknown domain: no request can be rebuilt
            system = None
        listed = studio.get("steps")
        step_meta: list[Any] = listed if isinstance(listed, list) else []
        history: list[Turn] = []
        rows = []
        for i, result in enumerate(record.steps, start=1):
            meta = step_meta[i - 1] if i - 1 < len(step_meta) else {}
            meta = meta if isinstance(meta, Mapping) else {}
            firings = [f.to_dict() for f in result.firings]
            telemetry: dict[str, Any] = {
                **result.timings.to_dict(),
                **asdict(result.usage),
                "finish_reason": result.finish_reason,
                "notes": list(result.notes),
            }
            if meta.get("outcome") is not None:
                telemetry["outcome"] = meta["outcome"]
            messages = [dict(m) for m in result.messages]
            if messages != request_messages(system, history, result.action, firings):
                telemetry["messages"] = messages
            reward = meta.get("reward")
            rows.append(
                Step(
                    episode=episode,
                    index=i,
                    action=result.action,
                    status=StepStatus.DONE,
                    observation=result.observation,
                    reasoning=result.reasoning,
                    raw_output=result.raw_output,
                    firings=firings,
                    verifiers=[v.to_dict() for v in result.verifiers],
                    telemetry=telemetry,
                    reward=float(reward) if isinstance(reward, int | float) else None,
                    terminated=bool(meta.get("terminated", False)),
                )
            )
            history.append(result.turn())
        Step.objects.bulk_create(rows)
        CollectionItem.objects.create(
            collection=collection, kind=ItemKind.EPISODE, object_id=episode.pk
        )
        episodes += 1
        steps += len(rows)
    return episodes, steps


def check_bundles(lines: Lines) -> list[FormatError]:
    return _limited(_bundle_problems(lines))


def _bundle_problems(lines: Lines) -> Iterator[FormatError]:
    for item in json_lines(lines()):
        if isinstance(item, FormatError):
            yield item
            continue
        for problem in validate_bundle(item.value):
            yield FormatError(problem, line=item.number)


def import_bundles(project: Project, lines: Lines, user: User, collection: Collection) -> int:
    """Each bundle as a scenario (its world found or created); how many."""
    scenarios = 0
    for line in lines():
        if not line.strip():
            continue
        scenario, _ = bundle_import(project=project, text=line, user=acting_user(user))
        CollectionItem.objects.get_or_create(
            collection=collection, kind=ItemKind.SCENARIO, object_id=scenario.pk
        )
        scenarios += 1
    return scenarios
