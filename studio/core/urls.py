from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from studio.core import views

urlpatterns = [
    path("", views.home, name="home"),
    path("status/", views.status, name="status"),
    path("healthz", views.healthz, name="healthz"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
