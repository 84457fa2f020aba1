"""A stored trace or episode as records: the one place the studio makes them.

Every record the studio writes comes from here: a trace's world and its
AgentWorldBench rows (what ``awb export`` writes and what re-simulation and the
judge ask the model), and an episode's or a trace's rows, trajectory record and
SFT conversation (what collection exports and dataset layouts write). The rows
are made by :mod:`simulator.formats.awb`, so the studio writes exactly what the
simulator's readers read, with one set of defaults whatever the object.

An imported benchmark row is kept as it was read (:class:`~studio.traces.models.TraceRow`)
and is authoritative: its system prompt, turn layout and instruction are written
back unchanged. Other traces and episodes get rows built from their turns.

Everything a record holds comes back on import (:mod:`studio.exports.importing`):
that is what makes export → import → export byte-identical. Ids and other
database details therefore never go into a record.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulator.awb_turns import INSTRUCTION, STATE
from simulator.episode import StepResult, Timings, Turn, usage_from_dict
from simulator.errors import InvalidWorld, SimulatorError
from simulator.formats.awb import REQUIRED_FIELDS, AwbRow, dump_row, episode_to_awb_rows, parse_row
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
from studio.episodes.models import Episode, Step
from studio.traces.models import Trace, TraceRow, TraceSource, TraceTurn
from studio.worlds.models import Scenario

#: Episode.metadata keys the importers set; exports read them back so files round-trip.
AWB_KEY = "awb"
SYSTEM_PROMPT_KEY = "system_prompt"
STUDIO_KEY = "studio"


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


# ── Defaults shared by traces and episodes ────────────────────────────────────────


def awb_task(domain: str) -> str:
    """The benchmark's ``task`` for a domain, when the object came from no benchmark row."""
    return f"agentworld/{domain}"


def default_system_prompt(world: WorldSpec, task: str = "") -> str:
    """The domain's system prompt for this world; empty when the world no longer validates."""
    try:
        return system_message(world, task or None)["content"]
    except (InvalidWorld, SimulatorError):
        return ""


def _sections(initial: str | None) -> list[tuple[str, str]]:
    return [(STATE, initial)] if initial else []


# ── Traces ────────────────────────────────────────────────────────────────────────


def trace_world(trace: Trace) -> WorldSpec:
    """The world a trace is simulated in: the recorded one, else one from its initial state."""
    recorded = trace.metadata.get("world")
    if isinstance(recorded, dict):
        try:
            return WorldSpec.from_dict(recorded)
        except InvalidWorld:
            pass
    return WorldSpec(
        domain=trace.domain or "unknown",
        title=trace.title or "Trace",
        initial_observation=str(trace.metadata.get("initial_state") or ""),
    )


def stored_rows(trace: Trace) -> list[AwbRow]:
    """The rows imported for ``trace``, in file order (empty when it came from elsewhere)."""
    return [
        parse_row(row.text, row.position)
        for row in TraceRow.objects.filter(trace=trace).order_by("position")
    ]


def _trace_id(trace: Trace) -> Any:
    try:
        return json.loads(trace.external_id)
    except ValueError:
        return trace.external_id or trace.pk


def built_rows(trace: Trace, turns: Sequence[TraceTurn]) -> list[dict[str, Any]]:
    """Rows for a trace without imported rows: one per turn, in the benchmark's layout."""
    if not turns:
        return []
    world = trace_world(trace)
    task = str(trace.metadata.get("task") or "")
    return episode_to_awb_rows(
        [Turn(t.action, t.observation) for t in turns],
        task=trace.task if trace.source == TraceSource.AWB else awb_task(trace.domain),
        trajectory_id=_trace_id(trace),
        system_str=trace.system_prompt or default_system_prompt(world, task),
        sections=_sections(trace.metadata.get("initial_state")),
    )


def trace_awb_rows(trace: Trace, turns: Sequence[TraceTurn]) -> list[dict[str, Any]]:
    """The rows of ``trace`` up to its last turn in ``turns``: the imported ones, else built."""
    stored = stored_rows(trace)
    if not stored:
        return built_rows(trace, turns)
    last = turns[-1].index if turns else 0
    return [dict(row.data) for row in stored if row.turn_idx <= last]


def turn_row(trace: Trace, index: int, *, rows: list[AwbRow] | None = None) -> dict[str, Any]:
    """The row eval.py evaluates for turn ``index`` of ``trace``.

    The imported row with that ``turn_idx`` when the file had one; else the row
    the benchmark would have written, built from the latest imported row's
    turns; for a trace that came from elsewhere, the row built from its turns.
    ``rows``: the trace's :func:`stored_rows`, when the caller has read them already.
    """
    rows = stored_rows(trace) if rows is None else rows
    exact = next((row for row in rows if row.turn_idx == index), None)
    if exact is not None:
        return dict(exact.data)
    latest = max(rows, key=lambda row: row.turn_idx, default=None)
    if latest is not None and index <= latest.turn_idx:
        return latest.for_turn(index)
    return built_rows(trace, list(trace.turns.all()))[index - 1]


def project_awb_lines(project: Project) -> Iterator[str]:
    """Every row of the project's traces as a line with its ending: imported rows byte for
    byte (a file's last line may have none), in file order.

    Imported rows come first, ordered by import and line, so a file imported into
    a project gives back exactly its lines; then the rows of the other traces.
    """
    imported = TraceRow.objects.filter(trace__project=project).order_by(
        "trace__import_job_id", "position", "id"
    )
    for row in imported.iterator(chunk_size=500):
        yield row.text
    others = (
        Trace.objects.filter(project=project)
        .exclude(rows__isnull=False)
        .order_by("created_at", "id")
        .prefetch_related("turns")
    )
    for trace in others:
        for data in built_rows(trace, list(trace.turns.all())):
            yield dump_row(data) + "\n"


def trace_sft_record(item: TraceItem, *, include_reasoning: bool) -> dict[str, Any]:
    results = [StepResult(t.action, t.observation, "", "", ()) for t in item.turns]
    record = episode_to_sft(item.trace.system_prompt, results, include_reasoning=include_reasoning)
    return record.to_dict()


def trace_trajectory_record(item: TraceItem) -> dict[str, Any]:
    """A trace as the episode an import of it becomes, so that exporting a trace,
    importing the file and exporting again gives the same bytes."""
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


# ── Episodes ──────────────────────────────────────────────────────────────────────


def system_prompt(episode: Episode, world: WorldSpec) -> str:
    """The world model's system prompt: as imported, else the domain's for this world."""
    stored = episode.metadata.get(SYSTEM_PROMPT_KEY)
    return stored if isinstance(stored, str) else default_system_prompt(world, episode.task)


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
        task=str(awb.get("task") or awb_task(episode.domain)),
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
