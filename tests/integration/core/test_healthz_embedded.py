from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_reports_every_part_in_embedded_mode(client: Client):
    response = client.get("/healthz")

    data = response.json()
    assert data["mode"] == "embedded"
    assert data["database"]["ok"] is True
    assert data["database"]["vendor"] == "sqlite"
    assert data["channel_layer"] == {
        "ok": True,
        "detail": "InProcessChannelLayer: round trip ok",
        "backend": "InProcessChannelLayer",
    }
    assert data["tasks"]["runner"] == "inprocess"
    assert data["tasks"]["ok"] is True
    assert data["world_model"]["kind"] == "local"
    assert data["world_model"]["ok"] is True
    assert data["world_model"]["endpoint"] == "local: embedded SmolLM2-135M-Instruct"
    assert data["ok"] is True
    assert response.status_code == 200


def test_it_keeps_test_data_out_of_the_users_var_dir():
    assert "studio-test-var-" in str(settings.VAR_DIR)


def test_it_reports_an_unreachable_world_model(client: Client, settings):
    settings.MODEL_URL = "http://127.0.0.1:9/v1"

    data = client.get("/healthz").json()

    assert data["world_model"]["kind"] == "openai"
    assert data["world_model"]["ok"] is False
    assert "127.0.0.1:9" in data["world_model"]["endpoint"]
    assert data["ok"] is False
