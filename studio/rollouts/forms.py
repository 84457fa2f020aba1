"""The new-rollout form: what to start from, the world model, the agent and the counts.

Starts and endpoints are pickers over what the user's projects hold, not free text,
so a typo cannot start a job whose every episode fails. Posts older clients made
still validate: a bare scenario id, and an agent endpoint given by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.db.models import Q, QuerySet

from studio.core.models import ModelEndpoint, Project
from studio.rollouts.services import COLLECTION_NAME_MAX
from studio.worlds.models import Scenario, World
from studio.worlds.selectors import start_groups

Choices = list[tuple[str, Any]]

SITE_WIDE = "Site-wide"


class StartField(forms.ChoiceField):
    """``scenario:ID`` or ``world:ID``, as the new-episode form posts; a bare ID is a scenario
    (what this form posted before it offered worlds)."""

    def to_python(self, value: Any) -> str:
        text = super().to_python(value)
        return f"scenario:{text}" if text.isdigit() else text


class RolloutForm(forms.Form):
    scenario = StartField(
        label="Start from",
        help_text="A scenario, or a bare world (no task, no success criteria: every episode "
        "runs to the step limit).",
    )
    endpoint = forms.ChoiceField(
        label="World model",
        required=False,
        help_text="Empty: the scenario's endpoint, else the studio's model.",
    )
    episodes = forms.IntegerField(min_value=1, max_value=10_000, initial=8)
    max_steps = forms.IntegerField(min_value=1, max_value=1000, initial=10)
    base_seed = forms.IntegerField(initial=0, min_value=-(2**31), max_value=2**31 - 1)
    policy = forms.ChoiceField(
        choices=[("scripted", "Scripted (a list of actions)"), ("llm", "LLM agent")],
        initial="scripted",
    )
    actions = forms.CharField(
        widget=forms.Textarea, required=False, help_text="Scripted: one action per line."
    )
    agent_endpoint = forms.ChoiceField(
        label="Agent endpoint",
        required=False,
        help_text="LLM: the model that picks the actions; empty: the studio's model (the "
        "embedded one when no model URL is set).",
    )
    collection_name = forms.CharField(
        required=False,
        max_length=COLLECTION_NAME_MAX,
        help_text="The collection the episodes are gathered into when the job ends; "
        "empty: rollout-<job id>.",
    )

    def __init__(self, *args: Any, projects: QuerySet[Project], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._projects = projects
        self._endpoints = endpoints = list(
            ModelEndpoint.objects.filter(Q(project__in=projects) | Q(project__isnull=True))
            .select_related("project")
            .order_by("project__name", "name")
        )
        self.fields["scenario"].choices = [("", "Choose…"), *_start_choices(projects)]  # type: ignore[attr-defined]
        self.fields["endpoint"].choices = [  # type: ignore[attr-defined]
            ("", "The scenario's, else the studio's default"),
            *_endpoint_choices(endpoints, value=lambda e: str(e.pk)),
        ]
        self.fields["agent_endpoint"].choices = [  # type: ignore[attr-defined]
            ("", "The studio's model"),
            *_endpoint_choices(endpoints, value=lambda e: e.name),
        ]

    def clean_scenario(self) -> Scenario | World:
        kind, _, pk = self.cleaned_data["scenario"].partition(":")
        start: Scenario | World | None
        if kind == "scenario":
            start = Scenario.objects.filter(
                project__in=self._projects, archived=False, pk=pk
            ).first()
        else:
            worlds = World.objects.filter(project__in=self._projects, archived=False, pk=pk)
            start = worlds.filter(head__isnull=False).first()
        if start is None:  # archived or deleted since the form was drawn
            raise forms.ValidationError("That scenario or world is no longer available.")
        return start

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("policy") == "scripted" and not (data.get("actions") or "").strip():
            self.add_error("actions", "A scripted policy needs at least one action.")
        start = data.get("scenario")
        if start is None:
            return data
        usable = [e for e in self._endpoints if e.project_id in (None, start.project_id)]
        refusal = f"Pick one of {start.project.name}'s endpoints or a site-wide one."
        if data.get("endpoint") and data["endpoint"] not in {str(e.pk) for e in usable}:
            self.add_error("endpoint", refusal)
        if data.get("agent_endpoint") and data["agent_endpoint"] not in {e.name for e in usable}:
            self.add_error("agent_endpoint", refusal)
        return data

    def start_kwargs(self) -> dict[str, Any]:
        """``project`` and ``scenario`` or ``world_revision`` for ``rollout_job_create``."""
        start = self.cleaned_data["scenario"]
        if isinstance(start, Scenario):
            return {"project": start.project, "scenario": start}
        return {"project": start.project, "world_revision": start.head}

    def world_model(self) -> ModelEndpoint | None:
        chosen = self.cleaned_data.get("endpoint")
        return next((e for e in self._endpoints if str(e.pk) == chosen), None)

    def policy_dict(self) -> dict[str, Any]:
        data = self.cleaned_data
        if data["policy"] == "scripted":
            actions = [line.strip() for line in data["actions"].splitlines() if line.strip()]
            return {"kind": "scripted", "actions": actions}
        policy: dict[str, Any] = {"kind": "llm"}
        if data["agent_endpoint"]:
            policy["endpoint"] = data["agent_endpoint"]
        return policy


def _start_choices(projects: QuerySet[Project]) -> Choices:
    """The new-episode form's groups (a domain each, scenarios before bare worlds), one set
    per project, the project named in each group when there is more than one."""
    projects = projects.order_by("name")
    several = projects.count() > 1
    choices: Choices = []
    for project in projects:
        for group in start_groups(project=project):
            title = f"{project.name} · {group['title']}" if several else group["title"]
            choices.append((title, [(item["value"], item["label"]) for item in group["items"]]))
    return choices


def _endpoint_choices(
    endpoints: list[ModelEndpoint], *, value: Callable[[ModelEndpoint], str]
) -> Choices:
    """Endpoints grouped by project, the site-wide ones last."""
    groups: dict[str, Choices] = {}
    for endpoint in endpoints:
        group = endpoint.project.name if endpoint.project is not None else SITE_WIDE
        groups.setdefault(group, []).append((value(endpoint), f"{endpoint.name} ({endpoint.kind})"))
    return sorted(groups.items(), key=lambda item: item[0] == SITE_WIDE)
