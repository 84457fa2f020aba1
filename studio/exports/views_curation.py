"""The one-step path from review to dataset: "Add curated turns to collection"."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from studio.core.access import get_project_for
from studio.exports.curation import collection_add_curated
from studio.exports.models import Collection
from studio.exports.services import collection_get_or_create
from studio.traces.models import AnnotationQueue, SimulatedTurn


@require_POST
@login_required
def add_curated(request: HttpRequest) -> HttpResponse:
    """Add the accepted and corrected turns of a queue (or a simulation) to a collection,
    an existing one or one made on the spot."""
    project, _ = get_project_for(request.user, request.POST.get("project", ""), edit=True)
    turns = SimulatedTurn.objects.filter(simulation__project=project)
    queue_id, simulation_id = request.POST.get("queue", ""), request.POST.get("simulation", "")
    back = reverse("exports:list")
    if queue_id.isdigit():
        queue = AnnotationQueue.objects.filter(pk=int(queue_id), project=project).first()
        if queue is None:
            raise Http404("No such queue")
        turns = turns.filter(queue_items__queue=queue)
        back = reverse("traces:queue-detail", kwargs={"pk": queue.pk})
    elif simulation_id.isdigit():
        turns = turns.filter(simulation_id=int(simulation_id))
        back = reverse("traces:review", kwargs={"pk": int(simulation_id)})
    chosen = request.POST.get("collection", "")
    name = request.POST.get("new_collection", "").strip()
    collection = (
        Collection.objects.filter(pk=int(chosen), project=project).first()
        if chosen.isdigit()
        else None
    )
    if collection is None and not name:
        messages.error(request, "Choose a collection or name a new one.")
        return redirect(back)
    if collection is None:
        collection = collection_get_or_create(project=project, name=name, user=request.user)
    result = collection_add_curated(collection=collection, turns=turns)
    note = f" {result.disputed} disputed turn(s) left out." if result.disputed else ""
    messages.success(
        request,
        f"Added {result.added} curated turn(s) ({result.corrected} corrected, "
        f"{result.accepted} accepted; already there: "
        f"{result.corrected + result.accepted - result.added}).{note}",
    )
    return redirect("exports:detail", pk=collection.pk)
