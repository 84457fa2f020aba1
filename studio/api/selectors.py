"""Reads for the API: what a token's user may see."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import QuerySet

from studio.api.models import ApiToken
from studio.core.access import get_for_member
from studio.episodes.models import Episode
from studio.worlds.models import Scenario


def scenario_list_for(*, user: User) -> QuerySet[Scenario]:
    return (
        Scenario.objects.filter(project__memberships__user=user, archived=False)
        .select_related("project", "world")
        .distinct()
        .order_by("pk")
    )


def scenario_get_for(*, user: User, scenario_id: int, edit: bool = False) -> Scenario:
    """The scenario if the user is a member of its project (404 otherwise, 403 for a viewer
    when ``edit``)."""
    return get_for_member(
        user,
        Scenario.objects.select_related("project", "world", "world_revision"),
        edit=edit,
        pk=scenario_id,
        archived=False,
    )


def env_get_for(*, user: User, env_id: int, edit: bool = False) -> Episode:
    return get_for_member(
        user,
        Episode.objects.select_related("project", "scenario", "world_revision"),
        edit=edit,
        pk=env_id,
    )


def token_list_for(*, user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user)
