from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from studio.core import views, views_projects

urlpatterns = [
    path("", views.home, name="home"),
    path("status/", views.status, name="status"),
    path("healthz", views.healthz, name="healthz"),
    path("status/model/", views.model_state, name="model-state"),
    path("docs/<slug:name>.md", views.doc, name="doc"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Projects and their members.
    path("projects/", views_projects.project_list, name="project-list"),
    path("projects/new/", views_projects.project_create_view, name="project-create"),
    path("projects/<slug:slug>/", views_projects.project_detail, name="project-detail"),
    path("projects/<slug:slug>/members/add", views_projects.member_add, name="project-member-add"),
    path(
        "projects/<slug:slug>/members/<int:member_id>/role",
        views_projects.member_role,
        name="project-member-role",
    ),
    path(
        "projects/<slug:slug>/members/<int:member_id>/remove",
        views_projects.member_remove,
        name="project-member-remove",
    ),
]
