"""Pages of annotation queues: list and create, a queue's progress and agreement, next item."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from studio.core.access import (
    EDIT_ROLES,
    get_for_member,
    get_project_for,
    membership_for,
    projects_for,
)
from studio.errors import StudioError
from studio.exports.models import Collection
from studio.traces import queues
from studio.traces.agreement import queue_agreement
from studio.traces.models import AnnotationQueue, Simulation


def _can_edit(request: HttpRequest, queue: AnnotationQueue) -> bool:
    membership = membership_for(request.user, queue.project)
    return membership is not None and membership.role in EDIT_ROLES


@require_GET
@login_required
def queue_list(request: HttpRequest) -> HttpResponse:
    slug = request.GET.get("project") or next(
        iter(projects_for(request.user).values_list("slug", flat=True)), ""
    )
    project, membership = get_project_for(request.user, slug)
    return render(
        request,
        "traces/queue_list.html",
        {
            "project": project,
            "queues": queues.queue_list(project=project),
            "can_edit": membership.role in EDIT_ROLES,
            "members": User.objects.filter(
                memberships__project=project, memberships__role__in=EDIT_ROLES
            ).order_by("username"),
            "simulations": Simulation.objects.filter(project=project).select_related("trace"),
        },
    )


@require_POST
@login_required
def queue_create(request: HttpRequest) -> HttpResponse:
    project, _ = get_project_for(request.user, request.POST.get("project", ""), edit=True)
    back = f"{reverse('traces:queues')}?project={project.slug}"
    ids = [i for i in request.POST.getlist("annotators") if i.isdigit()]
    per_item = request.POST.get("annotators_per_item", "1")
    try:
        queue = queues.queue_create(
            project=project,
            name=request.POST.get("name", ""),
            description=request.POST.get("description", ""),
            annotators=User.objects.filter(pk__in=ids, memberships__project=project),
            annotators_per_item=int(per_item) if per_item.isdigit() else 0,
            scope={
                "simulation": request.POST.get("simulation", ""),
                "domain": request.POST.get("domain", ""),
            },
            user=request.user,
        )
    except StudioError as error:
        messages.error(request, str(error))
        return redirect(back)
    return redirect("traces:queue-detail", pk=queue.pk)


@require_GET
@login_required
def queue_detail(request: HttpRequest, pk: int) -> HttpResponse:
    queue = get_for_member(request.user, AnnotationQueue.objects.select_related("project"), pk=pk)
    return render(
        request,
        "traces/queue_detail.html",
        {
            "queue": queue,
            "project": queue.project,
            "can_edit": _can_edit(request, queue),
            "progress": queues.annotator_progress(queue=queue),
            "item_count": queue.items.count(),
            "mine": queues.next_assignment(queue=queue, user=request.user),
            "agreement": queue_agreement(queue=queue),
            "collections": Collection.objects.filter(project=queue.project).order_by("name"),
        },
    )


@require_POST
@login_required
def queue_refresh(request: HttpRequest, pk: int) -> HttpResponse:
    queue = get_for_member(request.user, AnnotationQueue.objects.all(), edit=True, pk=pk)
    added = queues.queue_refresh(queue=queue)
    messages.success(request, f"Added {added} new turn{'s' if added != 1 else ''}.")
    return redirect("traces:queue-detail", pk=queue.pk)


@require_GET
@login_required
def queue_next(request: HttpRequest, pk: int) -> HttpResponse:
    """The review page at the user's next unfinished item, or the queue when there is none."""
    queue = get_for_member(request.user, AnnotationQueue.objects.all(), pk=pk)
    assignment = queues.next_assignment(queue=queue, user=request.user)
    if assignment is None:
        if not queue.annotators.filter(pk=request.user.pk or 0).exists():
            raise Http404("You are not an annotator of this queue")
        messages.success(request, f"Nothing left for you in {queue.name}.")
        return redirect("traces:queue-detail", pk=queue.pk)
    turn = assignment.item.simulated_turn
    review = reverse("traces:review", kwargs={"pk": turn.simulation_id})
    return redirect(f"{review}?turn={turn.index}&queue={queue.pk}")
