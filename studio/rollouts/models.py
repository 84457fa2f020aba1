"""Batch rollouts: a scenario (or a bare world) × N episodes × an agent policy, run by workers.

Each of a job's episodes has a row ``(job, index)`` (unique), so a task that is
delivered twice, or again after a worker died, continues the same episode from
its last done step instead of starting another. A row's ``lease_until`` says a
task is working on it now; a task that finds an unexpired lease leaves it alone.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from studio.core.models import ModelEndpoint, Project
from studio.episodes.models import Episode
from studio.worlds.models import Scenario, WorldRevision


class JobStatus(models.TextChoices):
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    CANCELLED = "cancelled", "Cancelled"


class RolloutJob(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rollout_jobs")
    #: What the episodes start from: a scenario, or a bare world's revision (then no task,
    #: no perturbations and no success criteria: every episode runs to ``max_steps``).
    scenario = models.ForeignKey(
        Scenario, null=True, blank=True, on_delete=models.CASCADE, related_name="rollout_jobs"
    )
    world_revision = models.ForeignKey(
        WorldRevision, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    title = models.CharField(max_length=200)
    episodes = models.PositiveIntegerField(default=1)
    max_steps = models.PositiveIntegerField(default=10)
    #: Episode i gets seed ``seeds[i]`` when given, else ``base_seed + i``.
    base_seed = models.IntegerField(default=0)
    seeds = models.JSONField(default=list, blank=True)
    #: The agent policy: {"kind": "scripted", "actions": [...]} or {"kind": "llm", "endpoint": name}
    #: (no endpoint name: the deployment's model, e.g. the embedded one).
    policy = models.JSONField(default=dict)
    #: The world model; empty: the scenario's endpoint, else the deployment's default.
    endpoint = models.ForeignKey(
        ModelEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    max_attempts = models.PositiveIntegerField(default=3)
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.RUNNING)
    #: The collection the episodes are added to when the job ends (``services._collect``).
    collection_name = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(scenario__isnull=False) | models.Q(world_revision__isnull=False),
                name="rollout_job_starts_somewhere",
            )
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def source_title(self) -> str:
        """The scenario's title, or the bare world's."""
        if self.scenario is not None:
            return self.scenario.title
        return self.world_revision.world.title if self.world_revision is not None else ""

    @property
    def group_name(self) -> str:
        return f"rollout-{self.pk}"

    def seed_for(self, index: int) -> int:
        if index < len(self.seeds):
            return int(self.seeds[index])
        return self.base_seed + index


class RowStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINISHED_ROWS = (RowStatus.DONE, RowStatus.FAILED, RowStatus.CANCELLED)


class RolloutEpisode(models.Model):
    job = models.ForeignKey(RolloutJob, on_delete=models.CASCADE, related_name="rows")
    index = models.PositiveIntegerField()
    episode = models.OneToOneField(
        Episode, null=True, blank=True, on_delete=models.SET_NULL, related_name="rollout_row"
    )
    status = models.CharField(max_length=10, choices=RowStatus.choices, default=RowStatus.PENDING)
    #: Why it ended: terminated, truncated, actions exhausted, or the error.
    outcome = models.CharField(max_length=200, blank=True)
    steps_done = models.PositiveIntegerField(default=0)
    tokens = models.PositiveIntegerField(default=0)
    reward = models.FloatField(default=0.0)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    lease_owner = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    #: When its task was last sent: unleased and unfinished long after, the message was lost.
    dispatched_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="one_row_per_job_index")
        ]

    def __str__(self) -> str:
        return f"{self.job} #{self.index}"
