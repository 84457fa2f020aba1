"""Reads for the API: what a token's user may see."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import QuerySet

from studio.api.models import ApiToken
from studio.core.access import checked_for_member, get_for_member, members_only
from studio.episodes.models import Episode
from studio.lib.compiled import CompiledQuery
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


@CompiledQuery
def _member_env(user_id: int, env_id: int) -> QuerySet[Episode]:
    episodes = Episode.objects.select_related("project", "scenario", "world_revision")
    return members_only(episodes.filter(pk=env_id), user_id).order_by("pk")[:1]


def env_get_for(*, user: User, env_id: int, edit: bool = False) -> Episode:
    """The episode if the user is a member of its project (404 otherwise, 403 for a viewer
    when ``edit``): every env API call starts here, so its query is compiled once."""
    return checked_for_member(_member_env.first(user.pk, env_id), edit=edit)


def token_list_for(*, user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user)
