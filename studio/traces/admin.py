from __future__ import annotations

from django.contrib import admin

from studio.traces.models import (
    Annotation,
    ImportJob,
    JudgeScore,
    SimulatedTurn,
    Simulation,
    Trace,
    TraceTurn,
    TuringGuess,
)


@admin.register(Trace)
class TraceAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["title", "project", "domain", "source", "created_at"]
    list_filter = ["domain", "source"]
    search_fields = ["title", "task", "external_id"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["filename", "project", "status", "traces_created", "duplicates", "created_at"]
    list_filter = ["status"]


@admin.register(Simulation)
class SimulationAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["trace", "mode", "status", "endpoint_label", "created_at"]
    list_filter = ["mode", "status"]


for model in (TraceTurn, SimulatedTurn, JudgeScore, TuringGuess, Annotation):
    admin.site.register(model)
