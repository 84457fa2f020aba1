"""Projects, their members, and world-model endpoints.

Every world, scenario, episode, trace, collection and export belongs to a
project; only its members see or change it (see ``studio.core.access``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from simulator.types import PromptLayout
from studio.core.endpoints import PROMPT_LAYOUT_KEY, prompt_layout


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    EDITOR = "editor", "Editor"
    VIEWER = "viewer", "Viewer"


#: The project ``manage.py bootstrap`` creates with the examples and sample traces;
#: the home page points newcomers at it.
SANDBOX_SLUG = "sandbox"


class Project(models.Model):
    name = models.CharField(max_length=120, unique=True)
    slug = models.SlugField(max_length=120, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="projects"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="one_membership_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"

    @property
    def can_edit(self) -> bool:
        return self.role in {Role.OWNER, Role.EDITOR}


class EndpointKind(models.TextChoices):
    OPENAI = "openai", "OpenAI-compatible (SGLang, vLLM, hosted)"
    LOCAL = "local", "Local transformers model"
    REPLAY = "replay", "Replay of recorded observations"


class ModelEndpoint(models.Model):
    """A world model (or agent policy) the studio can call.

    ``project`` is empty for site-wide endpoints. The API key is stored so
    workers can use it, but never rendered back or logged.
    """

    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="endpoints"
    )
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=10, choices=EndpointKind.choices)
    base_url = models.URLField(blank=True)
    model = models.CharField(max_length=200, blank=True)
    api_key = models.CharField(max_length=500, blank=True)
    config = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="unique_endpoint_name")
        ]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<ModelEndpoint {self.name!r} {self.kind} {self.base_url or self.model}>"

    @property
    def prompt_layout(self) -> PromptLayout:
        """How requests to this endpoint are laid out (``config["prompt_layout"]`` or by model)."""
        return prompt_layout(self)

    def to_spec(self) -> dict[str, Any]:
        """The backend spec ``simulator.backends.create_backend`` takes (no prompt layout)."""
        backend_config = {k: v for k, v in self.config.items() if k != PROMPT_LAYOUT_KEY}
        spec: dict[str, Any] = {"kind": self.kind, **backend_config}
        if self.base_url:
            spec["base_url"] = self.base_url
        if self.model:
            spec["model"] = self.model
        if self.api_key:
            spec["api_key"] = self.api_key
        return spec
