from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from studio.core.access import get_for_member
from studio.errors import StudioError
from studio.rollouts.forms import RolloutForm
from studio.rollouts.models import RolloutJob
from studio.rollouts.selectors import progress_context, rollout_jobs_for
from studio.rollouts.services import rollout_job_cancel, rollout_job_create, rollout_job_resume
from studio.worlds.selectors import editable_projects


@require_http_methods(["GET", "POST"])
@login_required
def job_list(request: HttpRequest) -> HttpResponse:
    form = RolloutForm(request.POST or None, projects=editable_projects(user=request.user))
    if request.method == "POST" and form.is_valid():
        try:
            job = rollout_job_create(
                **form.start_kwargs(),
                user=request.user,  # type: ignore[arg-type]
                episodes=form.cleaned_data["episodes"],
                max_steps=form.cleaned_data["max_steps"],
                policy=form.policy_dict(),
                base_seed=form.cleaned_data["base_seed"],
                endpoint=form.world_model(),
                collection_name=form.cleaned_data["collection_name"],
            )
        except StudioError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("rollouts:detail", job_id=job.pk)
    jobs = rollout_jobs_for(request.user)[:100]
    return render(request, "rollouts/job_list.html", {"jobs": jobs, "form": form})


@require_GET
@login_required
@vary_on_headers("HX-Request")
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_for_member(
        request.user,
        RolloutJob.objects.select_related("scenario", "world_revision__world", "endpoint"),
        pk=job_id,
    )
    template = (
        "rollouts/_progress.html"
        if request.headers.get("HX-Request")
        else "rollouts/job_detail.html"
    )
    return render(request, template, progress_context(job))


@require_POST
@login_required
def job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_for_member(request.user, RolloutJob.objects.all(), edit=True, pk=job_id)
    rollout_job_cancel(job=job)
    messages.info(request, "The job was cancelled.")
    return redirect("rollouts:detail", job_id=job.pk)


@require_POST
@login_required
def job_resume(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_for_member(request.user, RolloutJob.objects.all(), edit=True, pk=job_id)
    count = rollout_job_resume(job=job)
    messages.info(request, f"Resumed {count} unfinished episode(s).")
    return redirect("rollouts:detail", job_id=job.pk)
