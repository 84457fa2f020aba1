from __future__ import annotations

from django.urls import path

from studio.exports import views, views_curation

urlpatterns = [
    path("", views.collection_list, name="list"),
    path("new/", views.collection_create, name="create"),
    path("browse/", views.browse, name="browse"),
    path("browse/add/", views.add_filtered, name="add-filtered"),
    path("add/", views.add_form, name="add-form"),
    path("add/item/", views.add_item, name="add-item"),
    path("add/curated/", views_curation.add_curated, name="add-curated"),
    path("import/", views.import_upload, name="import"),
    path("<int:pk>/", views.collection_detail, name="detail"),
    path("<int:pk>/delete/", views.collection_delete, name="delete"),
    path("<int:pk>/remove/", views.item_remove, name="remove-item"),
    path("<int:pk>/export/", views.export, name="export"),
    path("exports/<int:job_id>/", views.job_detail, name="job"),
    path("exports/<int:job_id>/download/", views.job_download, name="job-download"),
    path("exports/<int:job_id>/manifest.json", views.job_manifest, name="job-manifest"),
]
