"""API tokens and chat-completions sessions.

A token is shown once, when it is made; the database keeps only its SHA-256
digest and a short prefix the UI shows so that a user can tell tokens apart.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from studio.episodes.models import Episode
from studio.worlds.models import Scenario


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=120)
    #: The token's first characters, shown in the UI ("wst_AbC123xy").
    prefix = models.CharField(max_length=16)
    #: sha256 hex of the whole token; the token itself is never stored.
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class CompletionSession(models.Model):
    """Which episode a chat-completions conversation continues.

    ``prefix_hash`` is the hash of the conversation as it stands after the
    episode's last step (its actions and observations as user/assistant
    turns); ``user_key`` is the request's ``user`` field when the client sends one.
    """

    token_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="+")
    episode = models.OneToOneField(
        Episode, on_delete=models.CASCADE, related_name="completion_session"
    )
    prefix_hash = models.CharField(max_length=64, db_index=True)
    user_key = models.CharField(max_length=200, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return f"session of {self.episode}"
