"""A newcomer's first step on the embedded model, in each of the seven Sandbox scenarios.

For every example scenario (studio/worlds/examples/, what ``manage.py bootstrap``
loads into the Sandbox) it takes the step a newcomer takes first (the scenario's
scripted first action) through ``simulator.engine.step`` on the embedded SmolLM2,
as the studio does: the ``edit`` layout, the world's sampling, the scenario's
perturbations. Printed per scenario: the step's time after the model is loaded
(goal <= 20 s), whether the observation passes its domain's format verifier
(goal: at least 5 of 7), the fraction of its word 8-grams that repeat (goal < 0.20),
and the step time divided by raw ``model.generate`` for the same prompt and the
same number of new tokens (greedy, no drafts, no stop: the plain model call).
Also the model's load time (from the converted copy under var/models) and the
load average, since the box is shared. Nothing here is asserted.

    .venv/bin/python benchmarks/first_step.py [--quick] [--no-baseline]

``--quick`` runs the web scenario only (the one the README walks through).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator import engine  # noqa: E402
from simulator.backends import create_backend  # noqa: E402
from simulator.backends.local import LoadedModel, LocalBackend  # noqa: E402
from simulator.episode import EpisodeState, StepResult  # noqa: E402
from simulator.errors import SimulatorError  # noqa: E402
from simulator.scenario import Scenario  # noqa: E402
from simulator.verifiers import verify_format  # noqa: E402
from simulator.world import World  # noqa: E402

EXAMPLES = ROOT / "studio" / "worlds" / "examples"
CACHE_DIR = ROOT / "var" / "models"
NGRAM = 8
GOAL_S = 20.0


def repeated_ngram_fraction(text: str, n: int = NGRAM) -> float:
    """The share of the text's word n-grams that occurred earlier in it (0 for short texts)."""
    words = text.split()
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    if not grams:
        return 0.0
    return (len(grams) - len(set(grams))) / len(grams)


@dataclass(frozen=True)
class Case:
    name: str
    state: EpisodeState
    action: str


def cases(quick: bool) -> list[Case]:
    found = []
    for path in sorted(EXAMPLES.glob("*.json")):
        if quick and not path.name.startswith("web-"):
            continue
        bundle = json.loads(path.read_text())
        world = World.from_dict(bundle["world"])
        scenario = Scenario.from_dict(bundle["scenario"])
        state = EpisodeState(
            world=world,
            task=scenario.task,
            perturbations=scenario.perturbations,
            seed=scenario.seed,
            sampling=scenario.sampling,
            layout="edit",
        )
        found.append(Case(f"{world.domain}: {scenario.title}", state, scenario.policy.actions[0]))
    return found


def raw_generate_s(loaded: LoadedModel, result: StepResult, tokens: int) -> float:
    """Seconds of plain greedy ``generate`` of ``tokens`` tokens on the step's own prompt."""
    prompt = loaded.tokenizer.apply_chat_template(
        [dict(m) for m in result.messages], add_generation_prompt=True, tokenize=False
    )
    inputs = loaded.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")
    seconds: list[float] = []

    def work() -> None:  # in a thread, as the backend generates
        started = time.perf_counter()
        loaded.model.generate(
            **inputs,
            max_new_tokens=max(tokens, 1),
            min_new_tokens=max(tokens, 1),
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
        )
        seconds.append(time.perf_counter() - started)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return seconds[0]


async def run(quick: bool, baseline: bool) -> None:
    backend = create_backend({"kind": "local", "cache_dir": str(CACHE_DIR)})
    assert isinstance(backend, LocalBackend)
    started = time.perf_counter()
    loaded = await backend.load()
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    print(f"model loaded in {time.perf_counter() - started:.1f} s (source: {loaded.source})")
    header = f"{'scenario':<48} {'step s':>7} {'tokens':>6} {'finish':>6} {'format':>6} "
    print(header + f"{'8-gram':>6} {'vs raw':>6}")
    passed = fast = 0
    worst_repeat = 0.0
    rows = cases(quick)
    for case in rows:
        started_step = time.perf_counter()
        try:
            result = await engine.step(case.state, case.action, backend)
        except SimulatorError as error:  # no observation at all: a failed first step
            seconds = time.perf_counter() - started_step
            fast += seconds <= GOAL_S
            print(f"{case.name[:48]:<48} {seconds:>7.1f} {type(error).__name__}: {error}")
            continue
        seconds = result.timings.done_s
        format_ok = all(
            v.passed for v in verify_format(case.state.world.domain, result.observation)
        )
        repeat = repeated_ngram_fraction(result.observation)
        ratio = "–"
        if baseline:
            raw = raw_generate_s(loaded, result, result.usage.completion_tokens)
            ratio = f"{seconds / raw:.2f}"
        passed += format_ok
        fast += seconds <= GOAL_S
        worst_repeat = max(worst_repeat, repeat)
        print(
            f"{case.name[:48]:<48} {seconds:>7.1f} {result.usage.completion_tokens:>6} "
            f"{result.finish_reason or '':>6} {'pass' if format_ok else 'FAIL':>6} "
            f"{repeat:>6.2f} {ratio:>6}",
            flush=True,
        )
    print(
        f"{fast}/{len(rows)} steps within {GOAL_S:.0f} s; {passed}/{len(rows)} pass their format "
        f"verifier; worst repeated {NGRAM}-gram fraction {worst_repeat:.2f}; "
        f"load average now {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the web scenario only")
    parser.add_argument("--no-baseline", action="store_true", help="skip the raw generate runs")
    args = parser.parse_args()
    asyncio.run(run(args.quick, not args.no_baseline))


if __name__ == "__main__":
    main()
