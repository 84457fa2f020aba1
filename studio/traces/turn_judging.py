"""Judging a simulation's turns concurrently, each score saved and shown as it arrives.

``STUDIO_JUDGE_CONCURRENCY`` requests are in flight at once
(:func:`simulator.review.bounded.map_bounded`). As in a simulation run, the model is
called on its own event loop in a helper thread and results come back through a
queue, so the database is touched only from the task's thread; each saved score is
sent at once to the simulation's WebSocket group as the turn's rendered sidebar
badges (``progress`` events with the HTML), which the review page swaps in by id.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string

from simulator.backends import create_backend
from simulator.review.bounded import map_bounded
from simulator.review.judge import (
    build_judge_messages,
    complete,
    judge_messages,
    judged_fields,
    parse_choice,
    turing_messages,
)
from simulator.types import EVAL_SAMPLING
from studio.core.endpoints import describe_spec
from studio.core.models import ModelEndpoint
from studio.lib.channels import PROGRESS, send_to_group
from studio.lib.step_loop import stream_on_step_loop
from studio.traces import selectors, services
from studio.traces.models import SimulatedTurn, Simulation, TuringGuess

Finished = tuple[SimulatedTurn, Any]


def turn_badges_html(turn: SimulatedTurn) -> str:
    """The turn's sidebar badges (verdicts, judge score), rendered and escaped."""
    return render_to_string("traces/_turn-badges.html", {"item": selectors.turn_item(turn=turn)})


def publish_turn_badges(turn: SimulatedTurn) -> None:
    """Show the turn's current badges on every review page open on its simulation."""
    send_to_group(turn.simulation.group_name, {"type": PROGRESS, "html": turn_badges_html(turn)})


def _save(turn: SimulatedTurn, result: Any, *, turing: bool, label: str) -> None:
    if turing:
        real_position, raw = result
        TuringGuess.objects.create(
            simulated_turn=turn,
            real_position=real_position,
            guess=parse_choice(raw) or "",
            judge_raw_output=raw,
            judge_endpoint=label,
        )
    else:
        services.judge_score_save(turn=turn, fields=result, endpoint_label=label)
        publish_turn_badges(turn)


def judge_simulation(
    *, simulation_id: int, endpoint_id: int | None = None, turing: bool = False
) -> int:
    """Judge every simulated turn (rubric scores, or blind A/B guesses); returns how many.

    A judge call that fails for good is raised once the scores already received are saved.
    """
    simulation = Simulation.objects.select_related("trace").get(pk=simulation_id)
    endpoint = ModelEndpoint.objects.filter(pk=endpoint_id).first() if endpoint_id else None
    spec = services.endpoint_spec(endpoint)
    label = describe_spec(spec)
    turns = list(simulation.turns.exclude(observation="").select_related("simulation__trace"))
    rows = [(t, services.awb_row_for(t)) for t in turns]

    async def run(put: Callable[[Finished], None]) -> None:
        backend = create_backend(spec)

        async def one(pair: tuple[SimulatedTurn, dict[str, Any]]) -> Any:
            turn, row = pair
            if turing:
                real_first = random.Random(turn.pk).random() < 0.5
                a, b = (row["response"][-1], turn.observation)
                if not real_first:
                    a, b = b, a
                raw = await complete(backend, turing_messages(row, a, b))
                return ("A" if real_first else "B", raw)
            # eval.py's judge sampling; no top_p/top_k (only sent when set).
            verdict = await judge_messages(
                backend, build_judge_messages(row, turn.observation), sampling=EVAL_SAMPLING
            )
            return judged_fields(verdict, turn.observation)

        try:
            await map_bounded(
                rows,
                one,
                concurrency=settings.JUDGE_CONCURRENCY,
                on_result=lambda pair, result: put((pair[0], result)),
            )
        finally:
            await backend.aclose()

    saved = 0
    for finished in stream_on_step_loop(run):  # a failed call is raised after the rest saved
        _save(*finished, turing=turing, label=label)
        saved += 1
    return saved
