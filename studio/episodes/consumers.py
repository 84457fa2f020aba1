"""The episode page's WebSocket: actions in, streamed steps out.

On connect the browser gets the episode as the database has it (the steps so
far, a running step's text so far), so connecting or reconnecting mid-step never
loses or duplicates a step. Deltas carry sequence numbers; a delta already
contained in what this socket was sent is dropped. Every fragment is rendered
from the same partial templates the page uses, and carries its target id.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.utils.html import escape

from studio.core.access import get_for_member, membership_for
from studio.episodes import services
from studio.episodes.composer import compose_action
from studio.episodes.fragments import (
    controls_context,
    status_context,
    step_context,
    steps_context,
)
from studio.episodes.models import Episode, Step, StepStatus
from studio.episodes.selectors import with_streamed_text
from studio.errors import NotAllowed, RejectedInput, simulator_input
from studio.lib.compiled import CompiledQuery
from studio.lib.consumers import LiveConsumer
from studio.lib.db import Priority, db_call


class EpisodeConsumer(LiveConsumer):
    id_kwarg = "episode_id"

    def join(self, user: Any, object_id: int | None) -> str:
        episode = get_for_member(user, Episode.objects.select_related("project"), pk=object_id)
        membership = membership_for(user, episode.project)
        self.episode_id = episode.pk
        self.can_edit = bool(membership and membership.can_edit)
        #: step id -> sequence number of the last text this socket holds for it.
        self.seen: dict[int, int] = {}
        self.shown: set[int] = set()
        #: step id -> the state of the step this socket's fragment shows (_shown_state).
        self.rendered: dict[int, tuple[Any, ...]] = {}
        return episode.group_name

    def state(self) -> str:
        episode = _with_world.get(self.episode_id)
        steps = [with_streamed_text(s) for s in episode.steps.order_by("index")]
        for step in steps:
            self.seen[step.pk] = step.partial_seq
            self.shown.add(step.pk)
            self.rendered[step.pk] = _shown_state(step)
        context = {"episode": episode, "steps": steps_context(steps, self.can_edit), "oob": True}
        timeline = render_to_string("episodes/_timeline.html", context)
        return timeline + self._controls(episode, full=True)

    def refresh(self) -> str:
        # Panels with forms in them (perturbations, agent) are re-sent only when they change.
        return self._controls(_with_world.get(self.episode_id), full=True)

    def _controls(self, episode: Episode, *, full: bool) -> str:
        context = {**controls_context(episode, self.can_edit), "oob": True, "full": full}
        return render_to_string("episodes/_controls.html", context)

    # --- from the browser ---------------------------------------------------------------

    def act(self, content: dict[str, Any]) -> str:
        if not self.can_edit:
            raise NotAllowed("Viewers cannot act in this episode.")
        episode = _with_world.get(self.episode_id)
        intent = str(content.get("intent") or "step")
        with simulator_input():
            if intent == "step":
                world = episode.world_revision.to_world()
                action = compose_action(world, content)
                services.step_submit(episode=episode, action=action, user=self.scope["user"])
                return self.problem("", ok=True)
            step = Step.objects.filter(episode=episode, pk=_int(content.get("step")) or 0).first()
            if step is None:
                step = episode.steps.order_by("-index").first()
            if step is None:
                raise RejectedInput("There is no step yet.")
            if intent == "cancel":
                services.step_cancel(step=step)
            elif intent == "retry":
                services.step_retry(step=step)
            return ""

    def problem(self, message: str, *, ok: bool = False) -> str:
        context = {"error": message, "ok": ok, "oob": True}
        return render_to_string("episodes/_validate.html", context)

    # --- from the channel layer ----------------------------------------------------------

    async def delta(self, event: dict[str, Any]) -> None:
        step_id, seq = event["step_id"], event["seq"]
        if seq <= self.seen.get(step_id, 0) or step_id not in self.shown:
            return
        self.seen[step_id] = seq
        parts = []
        for kind in ("reasoning", "observation"):
            if event.get(kind):
                target = f"step-{event['index']}-{kind}"
                parts.append(
                    f'<div hx-swap-oob="beforeend:#{target}">'
                    f'<span data-seq="{seq}">{escape(event[kind])}</span></div>'
                )
        await self.send_html("".join(parts))

    async def step(self, event: dict[str, Any]) -> None:
        html = await db_call(
            self._step_html, event["step_id"], event.get("seq", 0), priority=Priority.FINISH
        )
        await self.send_html(html)

    def _step_html(self, step_id: int, seq: int) -> str:
        step = _step_with_world.first(step_id, self.episode_id)
        if step is None:
            return ""
        # A running step's fragment holds its text up to partial_seq; newer deltas are
        # appended. A finished step's fragment is final: every later delta is dropped.
        if step.status == StepStatus.RUNNING:
            step = with_streamed_text(step)
            self.seen[step.pk] = step.partial_seq
        else:
            self.seen[step.pk] = max(seq, step.partial_seq, 10**9 if seq else 0)
        # A socket that lags handles a step's earlier events after the step has moved on:
        # each would render the same state again (the final fragment up to three times).
        if self.rendered.get(step.pk) == (state := _shown_state(step)):
            return ""
        self.rendered[step.pk] = state
        context = {"s": step_context(step, self.can_edit), "episode": step.episode}
        html = str(render_to_string("episodes/_step.html", context))
        if step.pk in self.shown:
            html = html.replace("<li ", '<li hx-swap-oob="true" ', 1)
        else:
            self.shown.add(step.pk)
            html = f'<div hx-swap-oob="beforeend:#timeline">{html}</div>'
        if step.status in services.BUSY:  # this step is the busy one; nothing else changed
            context = {**status_context(step.episode, self.can_edit, step), "oob": True}
            return html + render_to_string("episodes/_status.html", context)
        return html + self._controls(step.episode, full=False)


# Compiled (studio.lib.compiled): every socket watching an episode runs these on each
# step, and compiling the queryset cost more CPU than running it.
@CompiledQuery
def _with_world(episode_id: int) -> QuerySet[Episode]:
    """An episode with its world revision, which the side panels always read."""
    return Episode.objects.select_related("world_revision").filter(pk=episode_id)


@CompiledQuery
def _step_with_world(step_id: int, episode_id: int) -> QuerySet[Step]:
    """A step of this socket's episode (none of another's), with the episode and world."""
    steps = Step.objects.select_related("episode__world_revision")
    return steps.filter(pk=step_id, episode_id=episode_id).order_by("pk")[:1]


def _shown_state(step: Step) -> tuple[Any, ...]:
    """What a step's fragment shows changes only with these (a running step's text is
    up to ``partial_seq``; a retry counts an attempt and clears ``finished_at``)."""
    return (step.status, step.attempts, step.finished_at, step.partial_seq)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
