"""Collection items as export records, read in bounded chunks.

Items are resolved :data:`CHUNK` at a time (a few queries per chunk, never one
per row), so an export holds at most one chunk of episodes in memory whatever
the collection's size. A step item stands for its episode up to and including
that step; a scenario item is exported by the bundle format only. The records
are built with simulator.formats, so the studio writes exactly what the
simulator's readers read.

Everything a record holds comes back on import (``studio.exports.importing``):
that is what makes export → import → export byte-identical. Ids and other
database details therefore never go into a record.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TypeVar

from simulator.awb_turns import INSTRUCTION, STATE
from simulator.episode import StepResult, Timings, Turn, usage_from_dict
from simulator.errors import InvalidWorld, SimulatorError
from simulator.formats.awb import REQUIRED_FIELDS, episode_to_awb_rows
from simulator.formats.bundle import Bundle
from simulator.formats.sft import episode_to_sft
from simulator.formats.trajectory import EpisodeRecord
from simulator.perturbations import Firing
from simulator.prompting import build_messages, system_message, with_instructions
from simulator.scenario import Scenario as ScenarioSpec
from simulator.types import Message
from simulator.verifiers import VerifierResult
from simulator.world import World as WorldSpec
from studio.core.endpoints import official_system_template
from studio.core.models import Project
from studio.episodes.models import Episode, Step, StepStatus
from studio.exports.curation import CuratedItem, curated_items
from studio.exports.models import Collection, ItemKind
from studio.traces.awb_rows import trace_rows, trace_world
from studio.traces.models import Trace, TraceTurn
from studio.worlds.models import Scenario

CHUNK = 200
#: Episode.metadata keys the importers set; exports read them back so files round-trip.
AWB_KEY = "awb"
SYSTEM_PROMPT_KEY = "system_prompt"
STUDIO_KEY = "studio"

T = TypeVar("T")


def chunked(values: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(values)
    while batch := list(islice(iterator, size)):
        yield batch


@dataclass
class EpisodeItem:
    """An episode and its done steps (cut at the item's step for a step item)."""

    episode: Episode
    steps: list[Step] = field(default_factory=list)


@dataclass
class TraceItem:
    """A recorded trace and its real turns (cut at the item's turn)."""

    trace: Trace
    turns: list[TraceTurn] = field(default_factory=list)


Resolved = EpisodeItem | TraceItem | CuratedItem | Scenario | None


def resolve(project: Project, pairs: Iterable[tuple[str, int]]) -> Iterator[tuple[str, Resolved]]:
    """(kind, object) for each (kind, id), in order; None for an object that is gone."""
    for chunk in chunked(pairs, CHUNK):
        yield from _resolve_chunk(project, chunk)


def collection_pairs(collection: Collection) -> Iterator[tuple[str, int]]:
    items = collection.items.order_by("id").values_list("kind", "object_id")
    return items.iterator(chunk_size=CHUNK)


def _resolve_chunk(
    project: Project, chunk: list[tuple[str, int]]
) -> Iterator[tuple[str, Resolved]]:
    ids: dict[str, list[int]] = defaultdict(list)
    for kind, object_id in chunk:
        ids[kind].append(object_id)
    step_heads = {
        pk: (episode_id, index)
        for pk, episode_id, index in Step.objects.filter(
            pk__in=ids[ItemKind.STEP], episode__project=project
        ).values_list("pk", "episode_id", "index")
    }
    episode_ids = set(ids[ItemKind.EPISODE]) | {e for e, _ in step_heads.values()}
    episodes = Episode.objects.filter(pk__in=episode_ids, project=project).select_related(
        "world_revision", "scenario"
    )
    by_id = {e.pk: e for e in episodes}
    steps: dict[int, list[Step]] = defaultdict(list)
    for step in Step.objects.filter(episode_id__in=by_id, status=StepStatus.DONE).order_by(
        "episode_id", "index"
    ):
        steps[step.episode_id].append(step)
    scenarios = Scenario.objects.filter(
        pk__in=ids[ItemKind.SCENARIO], project=project
    ).select_related("world_revision")
    scenario_by_id = {s.pk: s for s in scenarios}
    turn_heads = {
        pk: (trace_id, index)
        for pk, trace_id, index in TraceTurn.objects.filter(
            pk__in=ids[ItemKind.TRACE_TURN], trace__project=project
        ).values_list("pk", "trace_id", "index")
    }
    traces = {t.pk: t for t in Trace.objects.filter(pk__in={t for t, _ in turn_heads.values()})}
    trace_turns: dict[int, list[TraceTurn]] = defaultdict(list)
    for turn in TraceTurn.objects.filter(trace_id__in=traces).order_by("trace_id", "index"):
        trace_turns[turn.trace_id].append(turn)
    curated = curated_items(project, ids[ItemKind.CURATED_TURN])
    for kind, object_id in chunk:
        if kind == ItemKind.EPISODE:
            episode = by_id.get(object_id)
            yield kind, EpisodeItem(episode, steps[object_id]) if episode else None
        elif kind == ItemKind.STEP and object_id in step_heads:
            episode_id, index = step_heads[object_id]
            cut = [s for s in steps[episode_id] if s.index <= index]
            yield kind, EpisodeItem(by_id[episode_id], cut) if episode_id in by_id else None
        elif kind == ItemKind.SCENARIO:
            yield kind, scenario_by_id.get(object_id)
        elif kind == ItemKind.TRACE_TURN and object_id in turn_heads:
            trace_id, index = turn_heads[object_id]
            kept = [t for t in trace_turns[trace_id] if t.index <= index]
            yield kind, TraceItem(traces[trace_id], kept)
        elif kind == ItemKind.CURATED_TURN:
            yield kind, curated.get(object_id)
        else:
            yield kind, None


# ── Episode → simulator values ────────────────────────────────────────────────────


def system_prompt(episode: Episode, world: WorldSpec) -> str:
    """The world model's system prompt: as imported, else the domain's for this world."""
    stored = episode.metadata.get(SYSTEM_PROMPT_KEY)
    if isinstance(stored, str):
        return stored
    try:
        return system_message(world, episode.task or None)["content"]
    except (InvalidWorld, SimulatorError):
        return ""


def request_messages(
    system: Message | None, history: list[Turn], action: str, firings: list[dict[str, Any]]
) -> list[Message]:
    """The request a step was made with, rebuilt as ``simulator.prompting.build_messages`` does."""
    if system is None:
        return []
    instructions = _instructions(firings)
    messages: list[Message] = [system]
    for turn in history:
        messages.append({"role": "user", "content": turn.action})
        messages.append({"role": "assistant", "content": turn.observation})
    messages.append({"role": "user", "content": with_instructions(action, instructions)})
    return messages


def _instructions(firings: list[dict[str, Any]]) -> list[str]:
    return [
        str(f.get("details", {}).get("instruction", ""))
        for f in firings
        if isinstance(f, dict) and f.get("mode") == "prompted"
    ]


def agentworld_request(
    episode: Episode, world: WorldSpec, history: list[Turn], step: Step
) -> list[Message]:
    """A live step sent in the agentworld layout, rebuilt as the engine built it.

    The official system prompt, when the deployment uses one, is read again
    from ``STUDIO_AGENTWORLD_PROMPTS``; empty when the world no longer validates.
    """
    try:
        return build_messages(
            world,
            history,
            step.action,
            instructions=_instructions(step.firings),
            task=episode.task or None,
            layout="agentworld",
            system_template=official_system_template(world.domain),
        )
    except (InvalidWorld, SimulatorError):
        return []


def _system(episode: Episode, world: WorldSpec) -> Message | None:
    try:
        return system_message(world, episode.task or None)
    except (InvalidWorld, SimulatorError):
        return None


def step_results(episode: Episode, world: WorldSpec, steps: list[Step]) -> list[StepResult]:
    system = _system(episode, world)
    history: list[Turn] = []
    results = []
    for step in steps:
        telemetry = step.telemetry or {}
        stored = telemetry.get("messages")
        if isinstance(stored, list):
            messages = stored
        elif telemetry.get("prompt_layout") == "agentworld":
            messages = agentworld_request(episode, world, history, step)
        else:
            messages = request_messages(system, history, step.action, step.firings)
        results.append(
            StepResult(
                action=step.action,
                observation=step.observation,
                reasoning=step.reasoning,
                raw_output=step.raw_output,
                messages=tuple({"role": m["role"], "content": m["content"]} for m in messages),
                firings=tuple(Firing.from_dict(f) for f in step.firings),
                verifiers=tuple(VerifierResult.from_dict(v) for v in step.verifiers),
                timings=Timings.from_dict(telemetry),
                usage=usage_from_dict(telemetry),
                finish_reason=telemetry.get("finish_reason"),
                notes=tuple(telemetry.get("notes", [])),
            )
        )
        history.append(Turn(step.action, step.observation))
    return results


def studio_metadata(episode: Episode, steps: list[Step]) -> dict[str, Any]:
    """What the studio knows about an episode beyond the trajectory's own fields."""
    return {
        "title": episode.title,
        "domain": episode.domain,
        "source": episode.source,
        "status": episode.status,
        "agent": episode.agent,
        "perturbations": episode.perturbations,
        "sampling": episode.sampling,
        "created_at": episode.created_at.isoformat(),
        "steps": [
            {
                "reward": s.reward,
                "terminated": s.terminated,
                "outcome": (s.telemetry or {}).get("outcome"),
            }
            for s in steps
        ],
    }


def trajectory_record(item: EpisodeItem) -> dict[str, Any]:
    episode = item.episode
    world = episode.world_revision.to_world()
    scenario = None
    if episode.scenario is not None:
        try:
            scenario = ScenarioSpec.from_dict(episode.scenario.spec)
        except SimulatorError:
            scenario = None
    metadata = {k: v for k, v in episode.metadata.items() if k != STUDIO_KEY}
    metadata[STUDIO_KEY] = studio_metadata(episode, item.steps)
    record = EpisodeRecord(
        world=world,
        steps=tuple(step_results(episode, world, item.steps)),
        task=episode.task,
        seed=episode.seed,
        scenario=scenario,
        metadata=metadata,
    )
    return record.to_dict()


def awb_rows(item: EpisodeItem) -> list[dict[str, Any]]:
    episode = item.episode
    if not item.steps:
        return []
    world = episode.world_revision.to_world()
    stored = episode.metadata.get(AWB_KEY)
    awb: dict[str, Any] = stored if isinstance(stored, dict) else {}
    rows = episode_to_awb_rows(
        [Turn(s.action, s.observation) for s in item.steps],
        task=str(awb.get("task") or f"agentworld/{episode.domain}"),
        trajectory_id=awb.get("id", episode.pk),
        system_str=str(awb["system_str"]) if "system_str" in awb else system_prompt(episode, world),
        sections=_first_sections(awb, world),
        fences=awb.get("fences", []),
        instruction=str(awb.get("instruction", INSTRUCTION)),
    )
    for row, step in zip(rows, item.steps, strict=True):
        extra = (step.telemetry or {}).get(AWB_KEY)
        if isinstance(extra, dict):
            row.update({k: v for k, v in extra.items() if k not in REQUIRED_FIELDS})
    return rows


def _first_sections(awb: dict[str, Any], world: WorldSpec) -> list[tuple[str, str]]:
    """The first turn's sections: as imported, else the world's initial state."""
    if "sections" in awb:
        return [(str(name), str(body)) for name, body in awb["sections"]]
    initial = awb.get("initial_state", world.initial_observation or None)
    return [(STATE, initial)] if initial is not None else []


def sft_record(item: EpisodeItem, *, include_reasoning: bool) -> dict[str, Any]:
    episode = item.episode
    world = episode.world_revision.to_world()
    results = [
        StepResult(s.action, s.observation, s.reasoning, s.raw_output, ()) for s in item.steps
    ]
    record = episode_to_sft(
        system_prompt(episode, world), results, include_reasoning=include_reasoning
    )
    return record.to_dict()


def bundle_record(scenario: Scenario) -> dict[str, Any]:
    bundle = Bundle(scenario.world_revision.to_world(), ScenarioSpec.from_dict(scenario.spec))
    return bundle.to_dict()


# ── Traces ────────────────────────────────────────────────────────────────────────
# A recorded trace is exported as the episode an import of it becomes, so that
# exporting a trace, importing the file and exporting again gives the same bytes.


def trace_awb_rows(item: TraceItem) -> list[dict[str, Any]]:
    return trace_rows(item.trace, item.turns)


def trace_sft_record(item: TraceItem, *, include_reasoning: bool) -> dict[str, Any]:
    results = [StepResult(t.action, t.observation, "", "", ()) for t in item.turns]
    record = episode_to_sft(item.trace.system_prompt, results, include_reasoning=include_reasoning)
    return record.to_dict()


def trace_trajectory_record(item: TraceItem) -> dict[str, Any]:
    trace = item.trace
    task = trace.metadata.get("task")
    seed = trace.metadata.get("seed")
    metadata = {
        STUDIO_KEY: {
            "title": trace.title,
            "domain": trace.domain,
            "source": "ui",
            "status": "closed",
            "agent": {"kind": "human"},
            "perturbations": [],
            "sampling": {},
            "created_at": trace.created_at.isoformat(),
            "steps": [{"reward": None, "terminated": False, "outcome": None} for _ in item.turns],
        }
    }
    record = EpisodeRecord(
        world=trace_world(trace),
        steps=tuple(StepResult(t.action, t.observation, "", "", ()) for t in item.turns),
        task=task if isinstance(task, str) else "",
        seed=seed if isinstance(seed, int) else 0,
        metadata=metadata,
    )
    return record.to_dict()
