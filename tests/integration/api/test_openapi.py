from __future__ import annotations

import pytest
from django.urls import URLPattern, get_resolver
from openapi_spec_validator import validate

from studio.api.openapi import openapi_schema


def test_the_schema_is_valid_openapi():
    validate(openapi_schema("http://testserver/"))


@pytest.mark.django_db
def test_it_is_served_without_a_token(client):
    response = client.get("/api/v1/openapi.json")

    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")


def test_every_api_route_is_documented():
    from studio.api import urls

    documented = set(openapi_schema()["paths"])
    routes = {
        "/" + str(p.pattern).replace("<int:env_id>", "{id}")
        for p in urls.urlpatterns
        if isinstance(p, URLPattern) and str(p.pattern).startswith(("api/v1", "v1/"))
    }
    assert routes == documented
    assert get_resolver() is not None
