from __future__ import annotations

import hashlib
import time

import pytest
from django.utils import timezone

from studio.api.models import ApiToken
from studio.api.services import token_authenticate, token_create, token_revoke

pytestmark = pytest.mark.django_db


def test_it_stores_only_a_digest_and_a_prefix(alice):
    token, clear = token_create(user=alice, name="ppo")

    assert clear.startswith("wst_") and len(clear) > 40
    assert token.digest == hashlib.sha256(clear.encode()).hexdigest()
    assert clear.startswith(token.prefix) and len(token.prefix) == 12
    assert clear not in str(ApiToken.objects.values_list().get(pk=token.pk))


def test_it_refuses_a_missing_unknown_or_revoked_token(client, alice):
    token, clear = token_create(user=alice, name="ppo")

    assert client.get("/api/v1/scenarios").json()["error"]["code"] == "unauthenticated"
    unknown = client.get("/api/v1/scenarios", HTTP_AUTHORIZATION="Bearer wst_nope")
    assert unknown.status_code == 401 and unknown.json()["error"]["code"] == "invalid_token"
    assert client.get("/api/v1/scenarios", HTTP_AUTHORIZATION=f"Bearer {clear}").status_code == 200
    token_revoke(token=token)
    revoked = client.get("/api/v1/scenarios", HTTP_AUTHORIZATION=f"Bearer {clear}")
    assert revoked.status_code == 401


def test_the_page_shows_a_new_token_once_and_revokes_it(client, alice):
    client.force_login(alice)

    created = client.post("/api/tokens/new", {"name": "grpo"}, HTTP_HX_REQUEST="true")
    token = ApiToken.objects.get(user=alice)
    page = client.get("/api/tokens/").content.decode()
    client.post(f"/api/tokens/{token.pk}/revoke")

    assert created.status_code == 200
    assert 'id="new-token-value"' in created.content.decode()
    assert token.prefix in page and 'id="new-token-value"' not in page
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_a_user_cannot_revoke_someone_elses_token(client, alice, django_user_model):
    bob = django_user_model.objects.create_user("bob", "", "correct-horse-9")
    token, _ = token_create(user=alice, name="ppo")
    client.force_login(bob)

    assert client.post(f"/api/tokens/{token.pk}/revoke").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_a_looked_up_token_is_trusted_for_a_few_seconds_then_checked_again(
    alice, settings, monkeypatch, django_assert_num_queries
):
    """A trainer's hundreds of steps a second do not each look the token up; a revocation
    by another process (here: straight in the database) holds within API_TOKEN_CACHE_S."""
    settings.API_TOKEN_CACHE_S = 5
    token, clear = token_create(user=alice, name="ppo")
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])

    assert token_authenticate(clear=clear) is not None  # looked up (and last_used_at set)
    with django_assert_num_queries(0):
        assert token_authenticate(clear=clear) is not None
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    now[0] += 4.9
    assert token_authenticate(clear=clear) is not None  # still within the 5 s
    now[0] += 0.2
    assert token_authenticate(clear=clear) is None


def test_a_token_revoked_in_this_process_is_refused_at_once(alice, settings):
    settings.API_TOKEN_CACHE_S = 60
    token, clear = token_create(user=alice, name="ppo")
    assert token_authenticate(clear=clear) is not None
    token_revoke(token=token)
    assert token_authenticate(clear=clear) is None
