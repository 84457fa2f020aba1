"""Real traces, their simulations, judge scores and human annotations.

A trace is a recorded trajectory (imported from AgentWorldBench JSONL or the
studio's trajectory JSONL). A simulation runs the world model over its actions;
each simulated turn sits next to the real one for review, with judge scores and
one annotation per reviewer.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from studio.core.models import ModelEndpoint, Project
from studio.worlds.models import Scenario


class TraceSource(models.TextChoices):
    AWB = "awb", "AgentWorldBench JSONL"
    TRAJECTORY = "trajectory", "Trajectory JSONL"


class ImportStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ImportJob(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="trace_imports")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    filename = models.CharField(max_length=255)
    #: Where the uploaded file waits for the task (deleted when the import ends).
    path = models.CharField(max_length=500, blank=True)
    size = models.BigIntegerField(default=0)
    source = models.CharField(max_length=12, choices=TraceSource.choices, blank=True)
    #: Import the valid lines of a file that has bad ones (otherwise nothing is imported).
    partial = models.BooleanField(default=False)
    status = models.CharField(
        max_length=10, choices=ImportStatus.choices, default=ImportStatus.PENDING
    )
    lines_total = models.PositiveIntegerField(default=0)
    lines_done = models.PositiveIntegerField(default=0)
    traces_created = models.PositiveIntegerField(default=0)
    duplicates = models.PositiveIntegerField(default=0)
    #: [{"line": 3, "field": "turn_idx", "reason": "missing"}, ...]
    errors = models.JSONField(default=list, blank=True)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import {self.filename} ({self.status})"

    @property
    def group_name(self) -> str:
        return f"trace-import-{self.pk}"

    @property
    def percent(self) -> int:
        return int(100 * self.lines_done / self.lines_total) if self.lines_total else 0


class Trace(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="traces")
    domain = models.CharField(max_length=40)
    source = models.CharField(max_length=12, choices=TraceSource.choices)
    #: AgentWorldBench ``task`` or the world's title.
    task = models.CharField(max_length=200, blank=True)
    #: AgentWorldBench ``id`` (as JSON text, so 1 and "1" stay apart) or the episode's id.
    external_id = models.CharField(max_length=200, blank=True)
    title = models.CharField(max_length=200)
    content_hash = models.CharField(max_length=64)
    system_prompt = models.TextField(blank=True)
    #: initial_state, world (trajectory imports), original metadata.
    metadata = models.JSONField(default=dict, blank=True)
    import_job = models.ForeignKey(
        ImportJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="traces"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "content_hash"], name="one_trace_per_content_per_project"
            )
        ]

    def __str__(self) -> str:
        return self.title


class TraceTurn(models.Model):
    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField(help_text="1-based")
    action = models.TextField()
    observation = models.TextField(blank=True)
    #: The rendered AgentWorldBench turn (without the answer instruction), if any.
    prompt_text = models.TextField(blank=True)

    class Meta:
        ordering = ["trace", "index"]
        constraints = [
            models.UniqueConstraint(fields=["trace", "index"], name="one_trace_turn_per_index")
        ]

    def __str__(self) -> str:
        return f"{self.trace} #{self.index}"


class TraceRow(models.Model):
    """One AgentWorldBench row exactly as imported.

    ``awb export`` writes ``text`` back unchanged, in the file's order
    (``position`` is its line), so importing a file and exporting it gives the
    same bytes: no row changed, none added, whatever rows the file held.
    Re-simulating a turn sends the request eval.py builds from its row.
    """

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="rows")
    turn_idx = models.PositiveIntegerField()
    position = models.PositiveIntegerField(help_text="line in the imported file")
    text = models.TextField()

    class Meta:
        ordering = ["trace", "position"]
        indexes = [models.Index(fields=["trace", "turn_idx"])]

    def __str__(self) -> str:
        return f"{self.trace} row {self.turn_idx}"


class SimulationMode(models.TextChoices):
    TEACHER_FORCED = "teacher_forced", "Teacher-forced (real history)"
    FREE_RUNNING = "free_running", "Free-running (simulated history)"


class SimulationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class Simulation(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="simulations")
    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="simulations")
    mode = models.CharField(
        max_length=16, choices=SimulationMode.choices, default=SimulationMode.TEACHER_FORCED
    )
    scenario = models.ForeignKey(
        Scenario, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    endpoint = models.ForeignKey(
        ModelEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    #: Where the world model was (without its API key), for the record.
    endpoint_label = models.CharField(max_length=300, blank=True)
    #: "awb" for ``awb infer --project`` runs, "studio" otherwise.
    origin = models.CharField(max_length=10, default="studio")
    status = models.CharField(
        max_length=10, choices=SimulationStatus.choices, default=SimulationStatus.PENDING
    )
    turns_done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    #: When its task was last sent: still pending long after, the message was lost.
    dispatched_at = models.DateTimeField(null=True, blank=True)
    #: When a task claimed it: running past the task time limit, its worker is gone.
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    #: The latest trajectory-level judge verdict (simulator.review.trajectory_judge's
    #: ``TrajectoryVerdict.to_dict()`` plus ``judge_endpoint`` and ``judged_at``); {} if none.
    trajectory_judgement = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.trace} · {self.get_mode_display()}"

    @property
    def group_name(self) -> str:
        return f"trace-simulation-{self.pk}"


class SimulatedTurn(models.Model):
    simulation = models.ForeignKey(Simulation, on_delete=models.CASCADE, related_name="turns")
    turn = models.ForeignKey(TraceTurn, on_delete=models.CASCADE, related_name="simulated")
    index = models.PositiveIntegerField()
    observation = models.TextField(blank=True)
    reasoning = models.TextField(blank=True)
    raw_output = models.TextField(blank=True)
    telemetry = models.JSONField(default=dict, blank=True)
    firings = models.JSONField(default=list, blank=True)
    verifiers = models.JSONField(default=list, blank=True)
    #: The same rule verifiers on the real observation.
    real_verifiers = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["simulation", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["simulation", "index"], name="one_simulated_turn_per_index"
            )
        ]

    def __str__(self) -> str:
        return f"{self.simulation} #{self.index}"


SCORE_FIELDS = ("format", "factuality", "consistency", "realism", "quality")
SCORE_CHOICES = [(i, str(i)) for i in range(1, 6)]


class JudgeScore(models.Model):
    """One judge verdict; dimension scores are 1–5 (0 = not scored, as eval.py writes)."""

    simulated_turn = models.ForeignKey(
        SimulatedTurn, on_delete=models.CASCADE, related_name="judge_scores"
    )
    format = models.PositiveSmallIntegerField(default=0)
    factuality = models.PositiveSmallIntegerField(default=0)
    consistency = models.PositiveSmallIntegerField(default=0)
    realism = models.PositiveSmallIntegerField(default=0)
    quality = models.PositiveSmallIntegerField(default=0)
    #: eval.py's total_score: mean of the scored dimensions, on 1–5 (0 when failed).
    mean_score = models.FloatField(default=0)
    #: The same on 0–100: (mean - 1) / 4 * 100.
    total_score = models.FloatField(default=0)
    failed = models.BooleanField(default=False)
    strengths = models.JSONField(default=list, blank=True)
    weaknesses = models.JSONField(default=list, blank=True)
    extracted_output = models.TextField(blank=True)
    judge_raw_output = models.TextField(blank=True)
    judge_endpoint = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"judge {self.total_score:.1f} on {self.simulated_turn}"


class TuringGuess(models.Model):
    """A blind judge's guess of which observation (A or B) was real."""

    simulated_turn = models.ForeignKey(
        SimulatedTurn, on_delete=models.CASCADE, related_name="turing_guesses"
    )
    real_position = models.CharField(max_length=1)
    guess = models.CharField(max_length=1, blank=True)
    judge_raw_output = models.TextField(blank=True)
    judge_endpoint = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    @property
    def correct(self) -> bool:
        return self.guess == self.real_position

    def __str__(self) -> str:
        return f"turing {self.guess or '?'} (real {self.real_position})"


class Verdict(models.TextChoices):
    NONE = "", "No verdict"
    ACCEPT = "accept", "Accept"
    REJECT = "reject", "Reject"


class Annotation(models.Model):
    simulated_turn = models.ForeignKey(
        SimulatedTurn, on_delete=models.CASCADE, related_name="annotations"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="trace_annotations"
    )
    format = models.PositiveSmallIntegerField(null=True, blank=True, choices=SCORE_CHOICES)
    factuality = models.PositiveSmallIntegerField(null=True, blank=True, choices=SCORE_CHOICES)
    consistency = models.PositiveSmallIntegerField(null=True, blank=True, choices=SCORE_CHOICES)
    realism = models.PositiveSmallIntegerField(null=True, blank=True, choices=SCORE_CHOICES)
    quality = models.PositiveSmallIntegerField(null=True, blank=True, choices=SCORE_CHOICES)
    tags = models.JSONField(default=list, blank=True)
    note = models.TextField(blank=True)
    corrected_observation = models.TextField(blank=True)
    verdict = models.CharField(max_length=6, choices=Verdict.choices, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["simulated_turn", "user"], name="one_annotation_per_user_per_turn"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} on {self.simulated_turn}"


class AnnotationQueue(models.Model):
    """Simulated turns handed out to chosen project members for annotation.

    ``scope`` picks the turns: ``{"simulation": id}``, ``{"domain": name}`` or both;
    empty means every simulated turn of the project. Each turn is given to
    ``annotators_per_item`` different annotators, so that their agreement can be
    measured; the work done is read from their :class:`Annotation` rows, never
    stored twice.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotation_queues")
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    scope = models.JSONField(default=dict, blank=True)
    annotators_per_item = models.PositiveSmallIntegerField(default=1)
    annotators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="annotation_queues", blank=True
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="unique_queue_name")
        ]

    def __str__(self) -> str:
        return self.name


class QueueItem(models.Model):
    queue = models.ForeignKey(AnnotationQueue, on_delete=models.CASCADE, related_name="items")
    simulated_turn = models.ForeignKey(
        SimulatedTurn, on_delete=models.CASCADE, related_name="queue_items"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["queue", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["queue", "simulated_turn"], name="one_queue_item_per_turn"
            )
        ]

    def __str__(self) -> str:
        return f"{self.simulated_turn} in {self.queue}"


class QueueAssignment(models.Model):
    """One annotator's share of one queue item; never the same item twice to one person."""

    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="assignments")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="queue_assignments"
    )
    assigned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "user"], name="one_assignment_per_item_per_user"
            )
        ]

    def __str__(self) -> str:
        return f"{self.item} → {self.user}"
