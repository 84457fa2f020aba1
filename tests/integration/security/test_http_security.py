"""CSRF on every form, request and upload limits, API tokens hashed at rest.

The CSRF test walks every URL pattern of the project: a session-authenticated POST
without a token must be refused (403) before any view runs. The only exempt views
are the token-authenticated API (``/api/v1/...``, ``/v1/...``): they ignore the
session cookie entirely, which the test checks too (a session alone gets 401).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import models
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.resolvers import RoutePattern

from studio.api.tokens import token_digest
from studio.core.models import Membership, Project

pytestmark = pytest.mark.django_db

TOKEN_AUTHENTICATED = re.compile(r"^/(api/v1/|v1/)")
SAMPLE = {"int": "1", "slug": "sec", "str": "x", "path": "x", "uuid": "0" * 32}


def _routes(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if isinstance(pattern.pattern, RoutePattern):
                yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern) and isinstance(pattern.pattern, RoutePattern):
            # Regex patterns (a few admin catch-alls) are left out: no sample path for them.
            yield prefix + str(pattern.pattern), pattern.callback


def concrete_paths() -> list[tuple[str, Any]]:
    paths = []
    for route, callback in _routes(get_resolver().url_patterns):
        path = "/" + re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE[m.group(1) or "str"], route)
        if resolve(path).func is callback:
            paths.append((path, callback))
    return paths


@pytest.fixture
def member() -> Any:
    user = get_user_model().objects.create_user("sec-owner", "", "pw-sec-123456")
    project = Project.objects.create(name="Sec", slug="sec")
    Membership.objects.create(project=project, user=user, role="owner")
    return user


@pytest.fixture
def csrf_client(member: Any) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(member)
    return client


def test_it_walks_enough_of_the_site_to_mean_something() -> None:
    paths = [path for path, _ in concrete_paths()]
    assert len(paths) > 40
    assert "/episodes/new/" in paths and "/projects/new/" in paths


def test_it_refuses_every_session_post_without_a_csrf_token(csrf_client: Client) -> None:
    unprotected = []
    for path, callback in concrete_paths():
        if getattr(callback, "csrf_exempt", False):
            assert TOKEN_AUTHENTICATED.match(path), f"{path} is csrf_exempt but not token API"
            continue
        response = csrf_client.post(path, {"name": "x"})
        if response.status_code != 403:
            unprotected.append((path, response.status_code))
    assert unprotected == []


def test_it_accepts_the_same_post_with_a_token(member: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(member)
    client.get("/projects/new/")
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/projects/new/", {"name": "With token", "slug": "with-token", "csrfmiddlewaretoken": token}
    )
    assert response.status_code in {200, 302}
    assert response.status_code != 403


def test_it_ignores_the_session_on_token_authenticated_endpoints(csrf_client: Client) -> None:
    exempt = [(p, c) for p, c in concrete_paths() if getattr(c, "csrf_exempt", False)]
    assert exempt, "the API's token endpoints are expected to be csrf_exempt"
    for path, _ in exempt:
        response = csrf_client.post(path, "{}", content_type="application/json")
        assert response.status_code in {401, 403, 405}, (path, response.status_code)


def test_it_refuses_a_form_body_over_the_request_limit(client: Client, member: Any, settings: Any):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    client.force_login(member)
    response = client.post("/projects/new/", {"name": "x" * 5000, "slug": "big"})
    assert response.status_code == 400
    assert not Project.objects.filter(slug="big").exists()


def test_it_refuses_an_api_body_over_its_limit_with_413(client: Client, member: Any, settings: Any):
    from studio.api.services import token_create

    settings.API_MAX_REQUEST_BYTES = 1000
    _, clear = token_create(user=member, name="limit")
    response = client.post(
        "/api/v1/envs",
        '{"scenario": 1, "pad": "' + "x" * 5000 + '"}',
        content_type="application/json",
        headers={"Authorization": f"Bearer {clear}"},
    )
    assert response.status_code == 413
    assert "over 1000 bytes" in response.json()["error"]["message"]


def test_it_refuses_an_upload_over_the_upload_limit_with_a_clear_error(
    client: Client, member: Any, settings: Any
) -> None:
    settings.STUDIO_MAX_UPLOAD_BYTES = 100
    client.force_login(member)
    upload = SimpleUploadedFile("big.jsonl", b'{"x": 1}\n' * 50, "application/jsonl")
    response = client.post("/traces/import/", {"project": "sec", "file": upload}, follow=True)
    assert "big.jsonl is larger than 100 bytes" in response.content.decode()
    assert not list((settings.VAR_DIR / "uploads").glob("*"))


def test_it_stores_api_tokens_only_as_hashes(client: Client, member: Any) -> None:
    client.force_login(member)
    response = client.post("/api/tokens/new", {"name": "trainer"})
    match = re.search(r"wst_[A-Za-z0-9_-]{20,}", response.content.decode())
    assert match is not None
    clear = match.group(0)

    # The clear token works...
    api = Client().get("/api/v1/scenarios", headers={"Authorization": f"Bearer {clear}"})
    assert api.status_code == 200
    # ...and appears nowhere in the database: every text column of every model.
    found = []
    for model in apps.get_models():
        fields = [
            f.name
            for f in model._meta.concrete_fields
            if isinstance(f, models.CharField | models.TextField | models.JSONField)
        ]
        for row in model._default_manager.values_list(*fields):
            if any(clear in str(value) for value in row):
                found.append(model.__name__)
    assert found == []
    from studio.api.models import ApiToken

    assert ApiToken.objects.filter(digest=token_digest(clear)).exists()
