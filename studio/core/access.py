"""Project membership checks shared by views, consumers and the API.

An object of a project the user is not a member of answers 404, never 403, so
that its existence does not leak. A member whose role is too low for an action
gets 403: they can see the object, so there is nothing to hide.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import F, Model, QuerySet
from django.http import Http404

from studio.core.models import Membership, Project, Role

M = TypeVar("M", bound=Model)

EDIT_ROLES = (Role.OWNER, Role.EDITOR)


def membership_for(user: User | AnonymousUser, project: Project) -> Membership | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(project=project, user=user).first()


def projects_for(user: User | AnonymousUser) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    return Project.objects.filter(memberships__user=user)


def get_project_for(
    user: User | AnonymousUser, slug: str, *, edit: bool = False, own: bool = False
) -> tuple[Project, Membership]:
    """The project with ``slug`` if the user may see it (and edit/own it when asked); else 404."""
    project = Project.objects.filter(slug=slug).first()
    membership = membership_for(user, project) if project else None
    if project is None or membership is None:
        raise Http404("No such project")
    if own and membership.role != Role.OWNER:
        raise PermissionDenied("Only the project's owners can do this")
    if edit and membership.role not in EDIT_ROLES:
        raise PermissionDenied("Viewers cannot change this project")
    return project, membership


def get_for_member(
    user: User | AnonymousUser,
    queryset: QuerySet[M],
    *,
    edit: bool = False,
    **lookup: Any,
) -> M:
    """Fetch one object whose ``project`` the user belongs to (with an edit role if asked)."""
    if not user.is_authenticated:
        raise Http404("Not found")
    return checked_for_member(members_only(queryset.filter(**lookup), user.pk).first(), edit=edit)


def members_only(queryset: QuerySet[M], user_id: int) -> QuerySet[Any, M]:
    """``queryset`` narrowed to the objects of the user's projects, each with its
    ``member_role``.

    One query: a user has at most one membership per project, so the join needs no
    ``DISTINCT`` and brings the role along (this runs on every API call).
    """
    return queryset.filter(project__memberships__user_id=user_id).annotate(
        member_role=F("project__memberships__role")
    )


def checked_for_member(obj: M | None, *, edit: bool) -> M:
    """``obj`` as read through :func:`members_only`: 404 when it was not found there,
    403 for a viewer when ``edit``."""
    if obj is None:
        raise Http404("Not found")
    if edit and obj.member_role not in EDIT_ROLES:  # type: ignore[attr-defined]
        raise PermissionDenied("Viewers cannot change this project")
    return obj
