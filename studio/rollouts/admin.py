from __future__ import annotations

from django.contrib import admin

from studio.rollouts.models import RolloutEpisode, RolloutJob


class RolloutEpisodeInline(admin.TabularInline):  # type: ignore[type-arg]
    model = RolloutEpisode
    extra = 0
    readonly_fields = ["episode"]


@admin.register(RolloutJob)
class RolloutJobAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["title", "project", "scenario", "episodes", "status", "created_at"]
    inlines = [RolloutEpisodeInline]


@admin.register(RolloutEpisode)
class RolloutEpisodeAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["job", "index", "status", "steps_done", "attempts", "episode"]
