from __future__ import annotations

from django.urls import path

from studio.rollouts import views

urlpatterns = [
    path("", views.job_list, name="list"),
    path("<int:job_id>/", views.job_detail, name="detail"),
    path("<int:job_id>/cancel", views.job_cancel, name="cancel"),
    path("<int:job_id>/resume", views.job_resume, name="resume"),
]
