from __future__ import annotations

from django.contrib import admin

from studio.core.models import Membership, ModelEndpoint, Project


class MembershipInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Membership
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["name", "slug", "created_at"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["name", "kind", "base_url", "model", "project"]
    exclude = ["api_key"]
