"""The episode page's WebSocket: actions in, streamed steps out.

On connect the browser gets the episode as the database has it (the steps so
far, a running step's text so far), so connecting or reconnecting mid-step never
loses or duplicates a step. Deltas carry sequence numbers; a delta already
contained in what this socket was sent is dropped. Every fragment is rendered
from the same partial templates the page uses, and carries its target id.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.template.loader import render_to_string
from django.utils.html import escape

from simulator.errors import InvalidAction, InvalidPerturbation
from studio.core.access import membership_for
from studio.episodes import services
from studio.episodes.composer import compose_action
from studio.episodes.models import Episode, Step, StepStatus
from studio.episodes.selectors import with_streamed_text
from studio.episodes.views import controls_context, step_context

UNAUTHORIZED = 4401
NOT_FOUND = 4404


class EpisodeConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    async def connect(self) -> None:
        user = self.scope["user"]
        if not user.is_authenticated:
            await self.close(code=UNAUTHORIZED)
            return
        loaded = await self._load(user, int(self.scope["url_route"]["kwargs"]["episode_id"]))
        if loaded is None:
            await self.close(code=NOT_FOUND)
            return
        self.episode_id, self.can_edit, self.group = loaded
        #: step id -> sequence number of the last text this socket holds for it.
        self.seen: dict[int, int] = {}
        self.shown: set[int] = set()
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send(text_data=await self._state())

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    @database_sync_to_async
    def _load(self, user: Any, episode_id: int) -> tuple[int, bool, str] | None:
        episode = Episode.objects.filter(pk=episode_id).select_related("project").first()
        membership = membership_for(user, episode.project) if episode else None
        if episode is None or membership is None:
            return None
        return episode.pk, membership.can_edit, episode.group_name

    @database_sync_to_async
    def _state(self) -> str:
        episode = Episode.objects.get(pk=self.episode_id)
        steps = [with_streamed_text(s) for s in episode.steps.order_by("index")]
        for step in steps:
            self.seen[step.pk] = step.partial_seq
            self.shown.add(step.pk)
        context = {
            "episode": episode,
            "steps": [step_context(s, self.can_edit, last=s is steps[-1]) for s in steps],
            "oob": True,
        }
        timeline = render_to_string("episodes/_timeline.html", context)
        return timeline + self._controls(episode, full=True)

    def _controls(self, episode: Episode, *, full: bool) -> str:
        # Panels with forms in them (perturbations, agent) are re-sent only when they change.
        context = {**controls_context(episode, self.can_edit), "oob": True, "full": full}
        return render_to_string("episodes/_controls.html", context)

    # --- from the browser ---------------------------------------------------------------

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            return
        html = await self._act(content)
        if html:
            await self.send(text_data=html)

    @database_sync_to_async
    def _act(self, content: dict[str, Any]) -> str:
        if not self.can_edit:
            return _problem("Viewers cannot act in this episode.")
        episode = Episode.objects.get(pk=self.episode_id)
        intent = str(content.get("intent") or "step")
        try:
            if intent == "step":
                world = episode.world_revision.to_world()
                action = compose_action(world, content)
                services.step_submit(episode=episode, action=action, user=self.scope["user"])
                return _problem("", ok=True)
            step = Step.objects.filter(episode=episode, pk=_int(content.get("step")) or 0).first()
            if step is None:
                step = episode.steps.order_by("-index").first()
            if step is None:
                return _problem("There is no step yet.")
            if intent == "cancel":
                services.step_cancel(step=step)
            elif intent == "retry":
                services.step_retry(step=step)
            return ""
        except (InvalidAction, InvalidPerturbation, ValueError) as exc:
            return _problem(str(exc))
        except (services.EpisodeBusy, services.EpisodeClosed) as exc:
            return _problem(str(exc))

    # --- from the channel layer ----------------------------------------------------------

    async def episode_delta(self, event: dict[str, Any]) -> None:
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
        await self.send(text_data="".join(parts))

    async def episode_step(self, event: dict[str, Any]) -> None:
        html = await self._step_html(event["step_id"], event.get("seq", 0))
        if html:
            await self.send(text_data=html)

    @database_sync_to_async
    def _step_html(self, step_id: int, seq: int) -> str:
        step = Step.objects.filter(pk=step_id, episode_id=self.episode_id).first()
        if step is None:
            return ""
        # A running step's fragment holds its text up to partial_seq; newer deltas are
        # appended. A finished step's fragment is final: every later delta is dropped.
        if step.status == StepStatus.RUNNING:
            step = with_streamed_text(step)
            self.seen[step.pk] = step.partial_seq
        else:
            self.seen[step.pk] = max(seq, step.partial_seq, 10**9 if seq else 0)
        context = {"s": step_context(step, self.can_edit), "episode": step.episode}
        html = str(render_to_string("episodes/_step.html", context))
        if step.pk in self.shown:
            html = html.replace("<li ", '<li hx-swap-oob="true" ', 1)
        else:
            self.shown.add(step.pk)
            html = f'<div hx-swap-oob="beforeend:#timeline">{html}</div>'
        return html + self._controls(step.episode, full=False)

    async def episode_changed(self, event: dict[str, Any]) -> None:
        await self.send(text_data=await self._changed())

    @database_sync_to_async
    def _changed(self) -> str:
        return self._controls(Episode.objects.get(pk=self.episode_id), full=True)

    async def episode_cancel(self, event: dict[str, Any]) -> None:
        """For the running task; browsers learn the outcome from the step message."""


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _problem(text: str, *, ok: bool = False) -> str:
    return render_to_string("episodes/_validate.html", {"error": text, "ok": ok, "oob": True})
