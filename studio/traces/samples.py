"""Real recorded sessions shipped with the studio, so a new Sandbox has traces to review.

The files in ``sample_data/`` are the originals, unchanged, with their sources
and licences beside them (``sample_data/SOURCES.md``). Each is read with the
simulator's history imports and stored through the trajectory import's own
path (:func:`~studio.traces.services.record_trace_get_or_create`), so a sample
is like any imported trace: Simulate, review, judge and export work on it, and
loading the samples again finds the traces already there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simulator.episode import (
    StepResult,
    Turn,
    browsergym_log_goal,
    browsergym_log_trees,
    history_from_browsergym_log,
    history_from_tau_bench,
    history_from_terminal_triple,
)
from simulator.formats.trajectory import EpisodeRecord
from simulator.world import World
from studio.core.models import Project
from studio.traces.models import Trace
from studio.traces.services import record_trace_get_or_create

SAMPLE_DATA = Path(__file__).resolve().parent / "sample_data"

TRIPLES_REPO = "MKRWW/qwen3.6_27b-vs_Qwen-AgentWorld-35B-A3B"

#: What a sample file becomes: its world, the agent's task and the recorded turns.
Reading = tuple[World, str, tuple[Turn, ...]]


def _terminal_triple(text: str) -> Reading:
    """The history, then the final command with the output it really printed."""
    data = json.loads(text)
    final = Turn(str(data["action"]), str(data["truth"]["stdout"]))
    world = World(domain=str(data["domain"]), title="Recorded shell session")
    return world, "", (*history_from_terminal_triple(data), final)


def _browsergym_log(text: str) -> Reading:
    """The first accessibility tree is the page the agent started on."""
    turns = history_from_browsergym_log(text)
    world = World(
        domain="web", title="One Stop Market", initial_observation=browsergym_log_trees(text)[0]
    )
    return world, browsergym_log_goal(text), turns


def _tau_bench(text: str) -> Reading:
    """The tool calls and results; the user's first message is the task they served."""
    data = json.loads(text)
    first_request = next(
        (str(m.get("content") or "") for m in data["traj"] if m.get("role") == "user"), ""
    )
    world = World(domain="mcp", title="Airline reservations")
    return world, first_request, history_from_tau_bench(data)


@dataclass(frozen=True)
class Sample:
    """One shipped file, where it came from and how to read it."""

    path: str  #: under sample_data/
    title: str  #: what it is and where it came from, for the trace list
    source: str  #: repository, path
    licence: str
    read: Callable[[str], Reading]

    def record(self) -> EpisodeRecord:
        """The file as an episode record: its turns as steps, its provenance in metadata."""
        world, task, turns = self.read((SAMPLE_DATA / self.path).read_text(encoding="utf-8"))
        steps = tuple(
            StepResult(
                action=turn.action,
                observation=turn.observation,
                reasoning="",
                raw_output="",
                messages=(),
            )
            for turn in turns
        )
        metadata = {
            "id": f"sample:{self.path}",
            "title": self.title,
            "source": self.source,
            "licence": self.licence,
            "licence_file": f"studio/traces/sample_data/{Path(self.path).parent}/LICENSE.txt",
        }
        return EpisodeRecord(world=world, steps=steps, task=task, metadata=metadata)


SAMPLES = (
    Sample(
        "terminal/longchain_09.json",
        "Terminal session: ten steps in a scratch folder (Qwen-AgentWorld triples, MIT)",
        f"{TRIPLES_REPO}, tasks/terminal/triples/",
        "MIT",
        _terminal_triple,
    ),
    Sample(
        "terminal/errors_04.json",
        "Terminal session: failing commands and exit codes (Qwen-AgentWorld triples, MIT)",
        f"{TRIPLES_REPO}, tasks/terminal/triples/",
        "MIT",
        _terminal_triple,
    ),
    Sample(
        "terminal/preexisting2_02.json",
        "Terminal session: disk, memory and user of a real host (Qwen-AgentWorld triples, MIT)",
        f"{TRIPLES_REPO}, tasks/terminal/triples/",
        "MIT",
        _terminal_triple,
    ),
    Sample(
        "terminal/swe_00.json",
        "SWE session: writing a buggy calc.py (Qwen-AgentWorld triples, MIT)",
        f"{TRIPLES_REPO}, tasks/swe/triples/",
        "MIT",
        _terminal_triple,
    ),
    Sample(
        "web/browsergym_webarena_190_12_shopping.log",
        "WebArena shopping run (BrowserGym, Apache-2.0)",
        "ServiceNow/BrowserGym, results/2024-11-06_15-05-35_DemoAgentArgs_on_webarena.190_12/"
        "experiment.log",
        "Apache-2.0",
        _browsergym_log,
    ),
    Sample(
        "mcp/tau_bench_airline_gpt-4o_record0_task0.json",
        "Airline booking tool calls by gpt-4o (τ-bench, MIT)",
        "sierra-research/tau-bench, historical_trajectories/gpt-4o-airline.json (element 0)",
        "MIT",
        _tau_bench,
    ),
)


def samples_load(*, project: Project) -> list[tuple[Trace, bool]]:
    """Each sample's trace in ``project`` and whether this call created it."""
    return [record_trace_get_or_create(project=project, record=s.record()) for s in SAMPLES]
