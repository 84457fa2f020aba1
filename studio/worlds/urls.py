from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from studio.worlds import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.world_list, name="list"),
    path("new/", views.world_create, name="create"),
    path("<int:pk>/", views.world_detail, name="detail"),
    path("<int:pk>/save", views.world_save, name="save"),
    path("<int:pk>/validate", views.world_validate, name="validate"),
    path("<int:pk>/preview", views.world_preview, name="preview"),
    path("<int:pk>/revisions/", views.world_revisions, name="revisions"),
    path(
        "<int:pk>/revisions/<int:number>/preview",
        views.revision_preview,
        name="revision-preview",
    ),
    path("<int:pk>/duplicate", views.world_duplicate, name="duplicate"),
    path("<int:pk>/archive", views.world_archive, name="archive"),
    path("scenarios/", views.scenario_list, name="scenario-list"),
    path("scenarios/new/", views.scenario_create, name="scenario-create"),
    path("scenarios/import/", views.scenario_import, name="scenario-import"),
    path("scenarios/<int:pk>/", views.scenario_detail, name="scenario-detail"),
    path("scenarios/<int:pk>/save", views.scenario_save, name="scenario-save"),
    path("scenarios/<int:pk>/validate", views.scenario_validate, name="scenario-validate"),
    path("scenarios/<int:pk>/prompt", views.scenario_prompt, name="scenario-prompt"),
    path("scenarios/<int:pk>/export", views.scenario_export, name="scenario-export"),
    path("scenarios/<int:pk>/duplicate", views.scenario_duplicate, name="scenario-duplicate"),
    path("scenarios/<int:pk>/archive", views.scenario_archive, name="scenario-archive"),
    path(
        "scenarios/<int:pk>/perturbations/add",
        views.perturbation_add,
        name="perturbation-add",
    ),
    path(
        "scenarios/<int:pk>/perturbations/<int:index>/save",
        views.perturbation_save,
        name="perturbation-save",
    ),
    path(
        "scenarios/<int:pk>/perturbations/<int:index>/remove",
        views.perturbation_remove,
        name="perturbation-remove",
    ),
    path(
        "scenarios/<int:pk>/perturbations/<int:index>/move",
        views.perturbation_move,
        name="perturbation-move",
    ),
]
