"""Collections of curated items and the export jobs that write them out.

A collection item names its object by kind and id rather than by foreign key:
episodes, steps, scenarios, trace turns and annotations live in four apps, and an item whose
object was deleted is skipped (and counted) at export time instead of blocking
the deletion.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from studio.core.models import Project


class ItemKind(models.TextChoices):
    EPISODE = "episode", "Episode"
    STEP = "step", "Step"
    SCENARIO = "scenario", "Scenario"
    TRACE_TURN = "trace_turn", "Trace turn"
    #: An accepted or corrected simulated turn; ``object_id`` is the annotation that curated it.
    CURATED_TURN = "curated_turn", "Curated turn"


class Collection(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="collections")
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    #: The filters that built it, in order: [{"kind", "filter": {...}, "added": n}, ...].
    filters = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="unique_collection_name")
        ]

    def __str__(self) -> str:
        return self.name


class CollectionItem(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="items")
    kind = models.CharField(max_length=12, choices=ItemKind.choices)
    object_id = models.PositiveBigIntegerField()
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "kind", "object_id"], name="one_item_per_object"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id} in {self.collection}"


class ExportFormat(models.TextChoices):
    AWB = "awb", "AgentWorldBench JSONL"
    SFT = "sft", "Chat SFT JSONL"
    TRAJECTORY = "trajectory", "Trajectory JSONL"
    BUNDLE = "bundle", "Scenario bundles (JSONL)"


class ExportLayout(models.TextChoices):
    FILE = "file", "One file"
    HF = "hf", "Hugging Face dataset (zip)"


class ExportStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ExportJob(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="export_jobs")
    collection = models.ForeignKey(
        Collection, null=True, blank=True, on_delete=models.SET_NULL, related_name="exports"
    )
    format = models.CharField(max_length=12, choices=ExportFormat.choices)
    layout = models.CharField(max_length=4, choices=ExportLayout.choices, default=ExportLayout.FILE)
    #: {"include_reasoning": bool, "parquet": bool}
    options = models.JSONField(default=dict, blank=True)
    #: The collection's filters when the export was made (they also go into the manifest).
    filters = models.JSONField(default=list, blank=True)
    streamed = models.BooleanField(default=False)
    status = models.CharField(
        max_length=10, choices=ExportStatus.choices, default=ExportStatus.PENDING
    )
    items_total = models.PositiveIntegerField(default=0)
    items_done = models.PositiveIntegerField(default=0)
    #: Relative to settings.VAR_DIR / "exports"; empty for streamed downloads.
    path = models.CharField(max_length=300, blank=True)
    manifest = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_format_display()} export #{self.pk}"

    @property
    def group_name(self) -> str:
        return f"export-{self.pk}"

    @property
    def percent(self) -> int:
        if self.status == ExportStatus.DONE:
            return 100
        if not self.items_total:
            return 0
        return min(100, self.items_done * 100 // self.items_total)
