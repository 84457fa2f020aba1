"""Project pages: the list, creating one (its creator becomes owner), members and roles.

Anyone signed in may create a project. Seeing a project needs membership (404
otherwise); managing its members needs the owner role (403 for other members).
A project always keeps at least one owner.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from studio.core.access import get_project_for
from studio.core.models import Membership, Project, Role
from studio.errors import RejectedInput


class ProjectError(RejectedInput):
    """A refused change to a project or its members; the message says why."""


# Writes (kept here: the project pages are their only callers).


@transaction.atomic
def project_create(*, name: str, user: Any, description: str = "", slug: str = "") -> Project:
    name = name.strip()
    slug = slugify(slug or name)
    if not name or not slug:
        raise ProjectError("Give the project a name.")
    if Project.objects.filter(slug=slug).exists() or Project.objects.filter(name=name).exists():
        raise ProjectError("A project with this name already exists.")
    try:
        with transaction.atomic():
            project = Project.objects.create(name=name, slug=slug, description=description)
    except IntegrityError:
        raise ProjectError("A project with this name already exists.") from None
    Membership.objects.create(project=project, user=user, role=Role.OWNER)
    return project


def _other_owners(membership: Membership) -> bool:
    return (
        Membership.objects.filter(project=membership.project, role=Role.OWNER)
        .exclude(pk=membership.pk)
        .exists()
    )


def membership_add(*, project: Project, username: str, role: str) -> Membership:
    if role not in Role.values:
        raise ProjectError("Choose a role.")
    user = get_user_model().objects.filter(username=username.strip()).first()
    if user is None:
        raise ProjectError(f"No user called “{username.strip()}”.")
    if Membership.objects.filter(project=project, user=user).exists():
        raise ProjectError(f"{username.strip()} is already a member.")
    return Membership.objects.create(project=project, user=user, role=role)


@transaction.atomic
def membership_set_role(*, membership: Membership, role: str) -> Membership:
    if role not in Role.values:
        raise ProjectError("Choose a role.")
    if membership.role == Role.OWNER and role != Role.OWNER and not _other_owners(membership):
        raise ProjectError("A project needs at least one owner.")
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership) -> None:
    if membership.role == Role.OWNER and not _other_owners(membership):
        raise ProjectError("A project needs at least one owner.")
    membership.delete()


# Views.


@require_GET
@login_required
def project_list(request: HttpRequest) -> HttpResponse:
    memberships = (
        Membership.objects.filter(user_id=int(request.user.pk or 0))
        .select_related("project")
        .order_by("project__name")
    )
    return render(request, "core/project_list.html", {"memberships": memberships})


@require_http_methods(["GET", "POST"])
@login_required
def project_create_view(request: HttpRequest) -> HttpResponseBase:
    error = ""
    if request.method == "POST":
        try:
            project = project_create(
                name=request.POST.get("name", ""),
                slug=request.POST.get("slug", ""),
                description=request.POST.get("description", ""),
                user=request.user,
            )
        except ProjectError as exc:
            error = str(exc)
        else:
            messages.success(request, f"Created {project.name}; you are its owner.")
            return redirect("project-detail", slug=project.slug)
    context = {"error": error, "form": request.POST}
    return render(request, "core/project_create.html", context, status=400 if error else 200)


def _members_context(
    project: Project, membership: Membership, **extra: object
) -> dict[str, object]:
    return {
        "project": project,
        "membership": membership,
        "is_owner": membership.role == Role.OWNER,
        "members": project.memberships.select_related("user").order_by("user__username"),
        "roles": Role.choices,
        **extra,
    }


@require_GET
@login_required
@vary_on_headers("HX-Request")
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for(request.user, slug)
    context = _members_context(
        project,
        membership,
        worlds=project.worlds.filter(archived=False)[:20],
        scenarios=project.scenarios.filter(archived=False)[:20],
    )
    if request.headers.get("HX-Request"):
        return render(request, "core/_members.html", context)
    return render(request, "core/project_detail.html", context)


def _members_response(
    request: HttpRequest, project: Project, membership: Membership, error: str = ""
) -> HttpResponseBase:
    if request.headers.get("HX-Request"):
        context = _members_context(project, membership, error=error)
        return render(request, "core/_members.html", context)
    if error:
        messages.error(request, error)
    return redirect("project-detail", slug=project.slug)


def _member(project: Project, member_id: int) -> Membership:
    target = Membership.objects.filter(project=project, pk=member_id).first()
    if target is None:
        raise Http404("No such member")
    return target


@require_POST
@login_required
def member_add(request: HttpRequest, slug: str) -> HttpResponseBase:
    project, membership = get_project_for(request.user, slug, own=True)
    error = ""
    try:
        membership_add(
            project=project,
            username=request.POST.get("username", ""),
            role=request.POST.get("role", Role.VIEWER),
        )
    except ProjectError as exc:
        error = str(exc)
    return _members_response(request, project, membership, error)


@require_POST
@login_required
def member_role(request: HttpRequest, slug: str, member_id: int) -> HttpResponseBase:
    project, membership = get_project_for(request.user, slug, own=True)
    error = ""
    try:
        membership_set_role(
            membership=_member(project, member_id), role=request.POST.get("role", "")
        )
    except ProjectError as exc:
        error = str(exc)
    membership.refresh_from_db()
    return _members_response(request, project, membership, error)


@require_POST
@login_required
def member_remove(request: HttpRequest, slug: str, member_id: int) -> HttpResponseBase:
    project, membership = get_project_for(request.user, slug, own=True)
    error = ""
    target = _member(project, member_id)
    try:
        membership_remove(membership=target)
    except ProjectError as exc:
        error = str(exc)
    if target.pk == membership.pk and not error:
        if request.headers.get("HX-Request"):
            return HttpResponse(headers={"HX-Redirect": reverse("project-list")})
        return redirect("project-list")
    return _members_response(request, project, membership, error)
