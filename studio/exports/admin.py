from __future__ import annotations

from django.contrib import admin

from studio.exports.models import Collection, CollectionItem, ExportJob


class CollectionItemInline(admin.TabularInline):  # type: ignore[type-arg]
    model = CollectionItem
    extra = 0


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["name", "project", "updated_at"]
    list_filter = ["project"]
    inlines = [CollectionItemInline]


@admin.register(CollectionItem)
class CollectionItemAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["collection", "kind", "object_id", "added_at"]
    list_filter = ["kind"]


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["pk", "project", "collection", "format", "layout", "status", "created_at"]
    list_filter = ["status", "format"]
