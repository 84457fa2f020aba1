from __future__ import annotations

from django.urls import path

from studio.api import pages, views

urlpatterns = [
    path("api/v1/openapi.json", views.openapi, name="openapi"),
    path("api/v1/scenarios", views.scenarios, name="scenarios"),
    path("api/v1/envs", views.envs, name="envs"),
    path("api/v1/envs/<int:env_id>", views.env_detail, name="env"),
    path("api/v1/envs/<int:env_id>/step", views.env_step_view, name="env-step"),
    path("api/v1/envs/<int:env_id>/close", views.env_close, name="env-close"),
    path("v1/models", views.models, name="models"),
    path("v1/chat/completions", views.chat_completions, name="chat-completions"),
    path("api/tokens/", pages.tokens, name="tokens"),
    path("api/tokens/new", pages.token_new, name="token-new"),
    path("api/tokens/<int:token_id>/revoke", pages.token_revoke_view, name="token-revoke"),
]
