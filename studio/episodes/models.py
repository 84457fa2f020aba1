"""Episodes and their steps. The database is the source of truth for both.

A step row exists before the model is called (status ``pending``). The task that
runs it claims it with a conditional UPDATE, so a task delivered twice never
runs a step twice, and ``unique(episode, index)`` means it can never create two.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from studio.core.models import ModelEndpoint, Project
from studio.worlds.models import Scenario, WorldRevision


class EpisodeStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    DONE = "done", "Done"
    CLOSED = "closed", "Closed"


class EpisodeSource(models.TextChoices):
    UI = "ui", "Studio"
    API = "api", "Environment API"
    ROLLOUT = "rollout", "Batch rollout"
    COMPLETIONS = "completions", "Chat completions endpoint"


class RunStatus(models.TextChoices):
    IDLE = "idle", "Idle"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"


class Episode(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="episodes")
    scenario = models.ForeignKey(
        Scenario, null=True, blank=True, on_delete=models.SET_NULL, related_name="episodes"
    )
    world_revision = models.ForeignKey(
        WorldRevision, on_delete=models.PROTECT, related_name="episodes"
    )
    title = models.CharField(max_length=200)
    domain = models.CharField(max_length=40)
    task = models.TextField(blank=True)
    #: Perturbation dicts in force for the next steps (copied from the scenario, then live-edited).
    perturbations = models.JSONField(default=list, blank=True)
    seed = models.IntegerField(default=0)
    #: The agent policy: {"kind": "human"} | {"kind": "scripted", "actions": [...]} | ...
    agent = models.JSONField(default=dict, blank=True)
    endpoint = models.ForeignKey(
        ModelEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sampling = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=10, choices=EpisodeStatus.choices, default=EpisodeStatus.ACTIVE
    )
    source = models.CharField(
        max_length=12, choices=EpisodeSource.choices, default=EpisodeSource.UI
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks"
    )
    forked_at_step = models.PositiveIntegerField(null=True, blank=True)
    #: Indexes into ``perturbations`` switched off from the episode page (kept, not deleted,
    #: so that switching one back on restores it exactly).
    disabled_perturbations = models.JSONField(default=list, blank=True)
    #: Perturbation dicts queued for the next step only; ``step_submit`` consumes them.
    next_perturbations = models.JSONField(default=list, blank=True)
    #: The automatic agent (scripted, replay, llm): "run N steps", pause and stop.
    run_status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.IDLE)
    run_remaining = models.PositiveIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title

    @property
    def group_name(self) -> str:
        """The channel-layer group every browser watching this episode joins."""
        return self.group_for(self.pk)

    @staticmethod
    def group_for(episode_id: int) -> str:
        """:attr:`group_name` without loading the episode."""
        return f"episode-{episode_id}"

    @staticmethod
    def step_ends_group_for(episode_id: int) -> str:
        """The group that gets only the message of each step's end, not its stream: what
        an env API call waiting for a step listens to (studio/lib/inbox.py)."""
        return f"{Episode.group_for(episode_id)}-ends"


class StepStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class Step(models.Model):
    episode = models.ForeignKey(Episode, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField(help_text="1-based position in the episode")
    action = models.TextField()
    status = models.CharField(max_length=10, choices=StepStatus.choices, default=StepStatus.PENDING)
    observation = models.TextField(blank=True)
    reasoning = models.TextField(blank=True)
    raw_output = models.TextField(blank=True)
    #: Stream in progress, flushed periodically so a reconnecting browser can catch up.
    partial_observation = models.TextField(blank=True)
    partial_reasoning = models.TextField(blank=True)
    #: Perturbations added for this step only (live control), as dicts.
    extra_perturbations = models.JSONField(default=list, blank=True)
    firings = models.JSONField(default=list, blank=True)
    verifiers = models.JSONField(default=list, blank=True)
    #: queued_s, first_token_s, done_s, prompt/completion/reasoning/cached tokens.
    telemetry = models.JSONField(default=dict, blank=True)
    reward = models.FloatField(null=True, blank=True)
    terminated = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    error_kind = models.CharField(max_length=60, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    #: Set by ``step_cancel``; the running task polls it and stops the model stream.
    cancel_requested = models.BooleanField(default=False)
    #: The sequence number of the last delta included in ``partial_*``.
    partial_seq = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    #: When its task was last sent: a step pending long after it lost its message.
    dispatched_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["episode", "index"]
        constraints = [
            models.UniqueConstraint(fields=["episode", "index"], name="one_step_per_index")
        ]

    def __str__(self) -> str:
        return f"{self.episode} #{self.index}"

    @property
    def project(self) -> Project:
        return self.episode.project
