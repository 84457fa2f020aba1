"""Reading exports back into a project: episodes, scenarios and a collection holding them.

The format is detected from the data. Every line is checked before anything is
written; if any is bad, :class:`ImportRejected` lists every problem (``line N:
field: reason``) and the database is untouched. Otherwise everything is created
in one transaction.

What the studio's own exports carry is restored exactly (see
``studio.exports.records``), so export → import → export gives the same bytes.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from simulator.domains import domain_names, get_domain
from simulator.episode import Turn
from simulator.errors import FormatError
from simulator.formats import hf
from simulator.formats._jsonl import lines_of
from simulator.formats.awb import REQUIRED_FIELDS, AwbRow, awb_rows_to_trajectories, iter_awb
from simulator.formats.bundle import validate_bundle
from simulator.formats.sft import SftRecord, iter_sft
from simulator.formats.trajectory import EpisodeRecord, iter_trajectories
from simulator.world import World as WorldSpec
from studio.core.models import Project
from studio.episodes.models import Episode, EpisodeSource, EpisodeStatus, Step, StepStatus
from studio.exports.models import Collection, CollectionItem, ItemKind
from studio.exports.records import (
    AWB_KEY,
    STUDIO_KEY,
    SYSTEM_PROMPT_KEY,
    request_messages,
)
from studio.worlds.models import Scenario, WorldRevision
from studio.worlds.services import bundle_import, world_create

User = AbstractBaseUser | AnonymousUser | None
MAX_PROBLEMS = 200
FALLBACK_DOMAIN = "mcp"


class ImportRejected(Exception):
    """The file cannot be imported; ``problems`` lists every reason. Nothing was saved."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems[:5]) + (" …" if len(problems) > 5 else ""))


@dataclass(frozen=True)
class ImportResult:
    format: str
    collection: Collection
    episodes: int = 0
    steps: int = 0
    scenarios: int = 0


Lines = Callable[[], Iterator[str]]


def _document_lines(path: Path) -> Lines:
    return lambda: iter([path.read_text(encoding="utf-8")])


def detect(path: Path) -> tuple[str, Lines]:
    """(format, a function giving the data's lines) of a file, folder or zip."""
    if hf.is_layout(path):

        def lines() -> Iterator[str]:
            return hf.iter_layout_lines(path)

    elif path.is_file():

        def lines() -> Iterator[str]:
            return lines_of(path)

    else:
        raise ImportRejected([f"{path}: not a file, a dataset folder or a dataset zip"])
    first = next((line for line in lines() if line.strip()), None)
    if first is None:
        raise ImportRejected([f"{path}: no records"])
    try:
        data = json.loads(first)
    except ValueError:
        # Not JSONL: perhaps one indented bundle document, as the scenario page exports.
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError, IsADirectoryError):
            raise ImportRejected([f"line 1: not JSON or JSONL ({first[:60]!r})"]) from None
        if isinstance(data, dict) and "bundle_version" in data:
            return "bundle", _document_lines(path)
        raise ImportRejected(["the file is one JSON document but not a scenario bundle"]) from None
    if not isinstance(data, dict):
        raise ImportRejected(["line 1: a record must be a JSON object"])
    if "trajectory_version" in data:
        return "trajectory", lines
    if "bundle_version" in data:
        return "bundle", lines
    if "messages" in data:
        return "sft", lines
    if "turn_idx" in data or "prompt" in data:
        return "awb", lines
    raise ImportRejected([f"line 1: unknown record (keys: {', '.join(sorted(data)[:8])})"])


# ── Shared ────────────────────────────────────────────────────────────────────────


def _user(user: User) -> Any:
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
    world = world_create(project=project, spec=spec.to_dict(), user=_user(user))
    assert world.head is not None
    return world.head


@cache
def _domain_openings() -> tuple[tuple[str, str], ...]:
    openings = []
    for name in domain_names():
        prompt = get_domain(name).system_prompt(WorldSpec(domain=name, title="x"))
        openings.append((name, prompt[:100]))
    return tuple(openings)


def guess_domain(system_prompt: str) -> str:
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


def _unique_name(project: Project, name: str) -> str:
    taken = set(Collection.objects.filter(project=project).values_list("name", flat=True))
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name} ({n})", n + 1
    return candidate


def _problems(items: Iterator[Any], extra: Callable[[Any], list[str]] | None = None) -> list[str]:
    problems: list[str] = []
    for item in items:
        if isinstance(item, FormatError):
            problems.append(str(item))
        elif extra is not None:
            problems += extra(item)
        if len(problems) >= MAX_PROBLEMS:
            problems.append(f"(stopped after {MAX_PROBLEMS} problems)")
            break
    return problems


# ── Per format ────────────────────────────────────────────────────────────────────


def _check_sft(lines: Lines) -> list[str]:
    problems: list[str] = []
    for number, line in enumerate(lines(), start=1):
        if not line.strip():
            continue
        for item in iter_sft([line]):
            if isinstance(item, FormatError):
                problems.append(str(FormatError(item.reason, line=number, field=item.field)))
            else:
                problems += [f"line {number}: messages: {p}" for p in _sft_shape(item)]
        if len(problems) >= MAX_PROBLEMS:
            break
    return problems


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


def _import_sft(project: Project, lines: Lines, user: User, collection: Collection) -> ImportResult:
    episodes = steps = 0
    for number, record in enumerate(iter_sft(lines()), start=1):
        assert isinstance(record, SftRecord)
        messages = list(record.messages)
        system = messages.pop(0)["content"] if messages[0]["role"] == "system" else ""
        domain = guess_domain(system)
        revision = _placeholder_world(project, domain, "SFT", user)
        episode = Episode.objects.create(
            project=project,
            world_revision=revision,
            title=f"{collection.name} · conversation {number}",
            domain=domain,
            status=EpisodeStatus.CLOSED,
            metadata={SYSTEM_PROMPT_KEY: system},
            created_by=_user(user),
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
    return ImportResult("sft", collection, episodes=episodes, steps=steps)


def _import_awb(
    project: Project, rows: list[AwbRow], user: User, collection: Collection
) -> ImportResult:
    extras: dict[tuple[tuple[str, str], int], dict[str, Any]] = {}
    for row in rows:
        extra = {k: v for k, v in row.data.items() if k not in REQUIRED_FIELDS}
        if extra:
            extras[(row.trajectory_key, row.turn_idx)] = extra
    episodes = steps = 0
    for trajectory in awb_rows_to_trajectories(rows):
        key = (trajectory.task, str(trajectory.id))
        revision = _placeholder_world(project, trajectory.domain, "AgentWorldBench", user)
        episode = Episode.objects.create(
            project=project,
            world_revision=revision,
            title=f"{trajectory.task} #{trajectory.id}",
            domain=trajectory.domain,
            status=EpisodeStatus.CLOSED,
            metadata={
                AWB_KEY: {
                    "task": trajectory.task,
                    "id": trajectory.id,
                    "system_str": trajectory.system_str,
                    "initial_state": trajectory.initial_state,
                    "sections": [list(section) for section in trajectory.sections],
                    "fences": list(trajectory.fences),
                    "instruction": trajectory.instruction,
                }
            },
            created_by=_user(user),
        )
        Step.objects.bulk_create(
            Step(
                episode=episode,
                index=i,
                action=turn.action,
                status=StepStatus.DONE,
                observation=turn.observation,
                telemetry={AWB_KEY: extras[(key, i)]} if (key, i) in extras else {},
            )
            for i, turn in enumerate(trajectory.turns, start=1)
        )
        CollectionItem.objects.create(
            collection=collection, kind=ItemKind.EPISODE, object_id=episode.pk
        )
        episodes += 1
        steps += len(trajectory.turns)
    return ImportResult("awb", collection, episodes=episodes, steps=steps)


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
        created_by=_user(user),
    )


def _choice(value: Any, choices: Any, default: str) -> str:
    return value if value in choices.values else default


def _import_trajectories(
    project: Project, lines: Lines, user: User, collection: Collection
) -> ImportResult:
    from simulator.prompting import system_message

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
            title=str(studio.get("title") or record.world.title)[:200],
            domain=str(studio.get("domain") or record.world.domain)[:40],
            task=record.task,
            perturbations=list(studio.get("perturbations") or []),
            seed=record.seed,
            agent=dict(studio.get("agent") or {"kind": "human"}),
            sampling=dict(studio.get("sampling") or {}),
            status=_choice(studio.get("status"), EpisodeStatus, EpisodeStatus.CLOSED),
            source=_choice(studio.get("source"), EpisodeSource, EpisodeSource.UI),
            metadata=metadata,
            created_by=_user(user),
        )
        created_at = studio.get("created_at")
        if isinstance(created_at, str):
            with contextlib.suppress(ValueError):
                Episode.objects.filter(pk=episode.pk).update(
                    created_at=datetime.fromisoformat(created_at)
                )
        try:
            system = system_message(record.world, record.task or None)
        except Exception:  # an unknown domain: no request can be rebuilt
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
    return ImportResult("trajectory", collection, episodes=episodes, steps=steps)


def _check_bundles(lines: Lines) -> list[str]:
    problems: list[str] = []
    for number, line in enumerate(lines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            problems.append(f"line {number}: invalid JSON ({exc})")
            continue
        problems += [f"line {number}: {p}" for p in validate_bundle(data)]
        if len(problems) >= MAX_PROBLEMS:
            break
    return problems


def _import_bundles(
    project: Project, lines: Lines, user: User, collection: Collection
) -> ImportResult:
    scenarios = 0
    for line in lines():
        if not line.strip():
            continue
        scenario, _ = bundle_import(project=project, text=line, user=_user(user))
        CollectionItem.objects.get_or_create(
            collection=collection, kind=ItemKind.SCENARIO, object_id=scenario.pk
        )
        scenarios += 1
    return ImportResult("bundle", collection, scenarios=scenarios)


def import_path(
    *, project: Project, path: Path, user: User = None, collection_name: str = ""
) -> ImportResult:
    """Import a file (any format the studio writes) into ``project``, all or nothing."""
    format, lines = detect(path)
    awb_rows: list[AwbRow] = []
    if format == "awb":
        problems = []
        for item in iter_awb(lines()):
            if isinstance(item, FormatError):
                problems.append(str(item))
            else:
                awb_rows.append(item)
    elif format == "sft":
        problems = _check_sft(lines)
    elif format == "trajectory":
        problems = _problems(iter_trajectories(lines()))
    else:
        problems = _check_bundles(lines)
    if problems:
        raise ImportRejected(problems)
    name = collection_name or hf.dataset_name(path) or path.name.split(".")[0] or "Imported"
    with transaction.atomic():
        collection = Collection.objects.create(
            project=project,
            name=_unique_name(project, name),
            description=f"Imported from {path.name} ({format}).",
            created_by=_user(user),
        )
        if format == "awb":
            return _import_awb(project, awb_rows, user, collection)
        if format == "sft":
            return _import_sft(project, lines, user, collection)
        if format == "trajectory":
            return _import_trajectories(project, lines, user, collection)
        return _import_bundles(project, lines, user, collection)
