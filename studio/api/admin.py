from __future__ import annotations

from django.contrib import admin

from studio.api.models import ApiToken, CompletionSession


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["digest", "prefix"]


@admin.register(CompletionSession)
class CompletionSessionAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["episode", "token_user", "scenario", "user_key", "updated_at"]
