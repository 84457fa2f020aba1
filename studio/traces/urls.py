from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from studio.traces import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.trace_list, name="list"),
    path("import/", views.import_upload, name="upload"),
    path("imports/<int:pk>/", views.import_detail, name="import"),
    path("queue/", views.queue, name="queue"),
    path("stats/", views.stats, name="stats"),
    path("<int:pk>/", views.trace_detail, name="detail"),
    path("<int:pk>/simulate/", views.trace_simulate, name="simulate"),
    path("simulations/<int:pk>/", views.review, name="review"),
    path("simulations/<int:pk>/judge/", views.simulation_judge, name="judge"),
    path(
        "simulations/<int:pk>/judge-trajectory/",
        views.simulation_judge_trajectory,
        name="judge-trajectory",
    ),
    path("turns/<int:pk>/annotate/", views.annotate, name="annotate"),
    path("turns/<int:pk>/render/<str:side>/", views.render_side, name="render"),
]
