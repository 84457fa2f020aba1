from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from studio.episodes import views, views_render

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.episode_list, name="list"),
    path("new/", views.episode_new, name="new"),
    path("compare/", views.episode_compare, name="compare"),
    path("<int:pk>/", views.episode_detail, name="detail"),
    path("<int:pk>/validate", views.episode_validate, name="validate"),
    path("<int:pk>/fork", views.episode_fork, name="fork"),
    path("<int:pk>/close", views.episode_close, name="close"),
    path("<int:pk>/perturbations/form", views.perturbation_form, name="perturbation-form"),
    path("<int:pk>/perturbations/add", views.perturbation_add, name="perturbation-add"),
    path(
        "<int:pk>/perturbations/<int:index>/toggle",
        views.perturbation_toggle,
        name="perturbation-toggle",
    ),
    path("<int:pk>/agent", views.agent_update, name="agent"),
    path("<int:pk>/agent/<str:command>", views.agent_control, name="agent-control"),
    path("<int:pk>/steps/<int:index>/retry", views.step_retry, name="step-retry"),
    path("<int:pk>/steps/<int:index>/cancel", views.step_cancel, name="step-cancel"),
    path("<int:pk>/steps/<int:index>/render", views_render.render_step, name="render-step"),
    path("<int:pk>/initial/render", views_render.render_initial, name="render-initial"),
]
