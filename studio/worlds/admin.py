from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from studio.worlds.models import Scenario, World, WorldRevision


class WorldRevisionInline(admin.TabularInline):  # type: ignore[type-arg]
    model = WorldRevision
    extra = 0
    fields = ["number", "content_hash", "note", "created_by", "created_at"]
    readonly_fields = ["number", "content_hash", "note", "created_by", "created_at"]
    can_delete = False


@admin.register(World)
class WorldAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["title", "domain", "project", "archived", "updated_at"]
    list_filter = ["domain", "archived", "project"]
    search_fields = ["title"]
    raw_id_fields = ["head"]
    inlines = [WorldRevisionInline]


@admin.register(WorldRevision)
class WorldRevisionAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["world", "number", "content_hash", "created_at"]
    search_fields = ["world__title", "content_hash"]
    # Revisions are immutable: the admin shows them but never edits them.
    readonly_fields = ["world", "number", "spec", "content_hash", "note", "created_by"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["title", "world", "world_revision", "project", "archived", "updated_at"]
    list_filter = ["archived", "project"]
    search_fields = ["title"]
    raw_id_fields = ["world", "world_revision", "endpoint"]
