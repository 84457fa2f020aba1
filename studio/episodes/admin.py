from __future__ import annotations

from django.contrib import admin

from studio.episodes.models import Episode, Step


class StepInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Step
    extra = 0
    fields = ("index", "action", "status", "error_kind", "attempts")
    readonly_fields = fields
    show_change_link = True


@admin.register(Episode)
class EpisodeAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("id", "title", "project", "domain", "status", "source", "created_at")
    list_filter = ("status", "domain", "source")
    search_fields = ("title", "task")
    raw_id_fields = ("world_revision", "scenario", "parent", "endpoint", "created_by")
    inlines = [StepInline]


@admin.register(Step)
class StepAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("id", "episode", "index", "status", "error_kind", "attempts", "created_at")
    list_filter = ("status",)
    raw_id_fields = ("episode",)
