from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet

from studio.worlds.models import Scenario


class RolloutForm(forms.Form):
    scenario = forms.ModelChoiceField(queryset=Scenario.objects.none())
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
    agent_endpoint = forms.CharField(
        required=False,
        max_length=120,
        help_text="LLM: a model endpoint's name; empty: the studio's model (the embedded one "
        "when no model URL is set).",
    )
    collection_name = forms.CharField(required=False, max_length=200)

    def __init__(self, *args: Any, scenarios: QuerySet[Scenario], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["scenario"].queryset = scenarios  # type: ignore[attr-defined]

    def policy_dict(self) -> dict[str, Any]:
        data = self.cleaned_data
        if data["policy"] == "scripted":
            actions = [line.strip() for line in data["actions"].splitlines() if line.strip()]
            return {"kind": "scripted", "actions": actions}
        policy: dict[str, Any] = {"kind": "llm"}
        if data["agent_endpoint"]:
            policy["endpoint"] = data["agent_endpoint"]
        return policy

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("policy") == "scripted" and not (data.get("actions") or "").strip():
            self.add_error("actions", "A scripted policy needs at least one action.")
        return data
