from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from simulator.types import PROMPT_LAYOUTS
from studio.core.endpoints import PROMPT_LAYOUT_KEY
from studio.core.models import Membership, ModelEndpoint, Project


class MembershipInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Membership
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["name", "slug", "created_at"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


class ModelEndpointForm(forms.ModelForm):  # type: ignore[type-arg]
    """The endpoint, with its prompt layout as a choice instead of a key buried in ``config``."""

    # Model servers are usually reached over plain http inside a deployment.
    base_url = forms.URLField(required=False, assume_scheme="http")
    prompt_layout = forms.ChoiceField(
        choices=[("", "By model name (agentworld for Qwen-AgentWorld, else plain)")]
        + [(layout, layout) for layout in PROMPT_LAYOUTS],
        required=False,
        help_text="How episode requests are written: agentworld is AgentWorldBench's turn "
        "layout, the one Qwen-AgentWorld was trained and measured in; plain sends bare "
        "actions and observations.",
    )

    class Meta:
        model = ModelEndpoint
        exclude = ["api_key"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initial["prompt_layout"] = (self.instance.config or {}).get(PROMPT_LAYOUT_KEY, "")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        config = {k: v for k, v in (data.get("config") or {}).items() if k != PROMPT_LAYOUT_KEY}
        if data.get("prompt_layout"):
            config[PROMPT_LAYOUT_KEY] = data["prompt_layout"]
        data["config"] = config
        return data


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    form = ModelEndpointForm
    list_display = ["name", "kind", "base_url", "model", "prompt_layout", "project"]
