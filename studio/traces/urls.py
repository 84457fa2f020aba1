from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from studio.traces import views, views_queues

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.trace_list, name="list"),
    path("import/", views.import_upload, name="upload"),
    path("imports/<int:pk>/", views.import_detail, name="import"),
    path("queue/", views.queue, name="queue"),
    path("stats/", views.stats, name="stats"),
    path("queues/", views_queues.queue_list, name="queues"),
    path("queues/new/", views_queues.queue_create, name="queue-create"),
    path("queues/<int:pk>/", views_queues.queue_detail, name="queue-detail"),
    path("queues/<int:pk>/next/", views_queues.queue_next, name="queue-next"),
    path("queues/<int:pk>/refresh/", views_queues.queue_refresh, name="queue-refresh"),
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
