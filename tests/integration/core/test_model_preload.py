"""The embedded model's background load: off under pytest and with a model URL, shown on the
status page (the load itself is exercised end to end by tests/e2e/test_first_step.py)."""

from __future__ import annotations

import pytest
from django.test import Client

from studio.core.endpoints import prompt_layout
from studio.core.preload import embedded_model_state, start_model_preload

pytestmark = pytest.mark.django_db


def test_the_test_process_does_not_preload_and_the_status_page_says_so(admin_client: Client):
    page = admin_client.get("/status/").content.decode()
    assert 'id="model-state"' in page and 'data-phase="idle"' in page
    assert embedded_model_state() == {"phase": "idle", "error": ""}


def test_a_deployment_with_a_model_url_has_nothing_to_load(settings, admin_client: Client):
    settings.MODEL_URL = "http://127.0.0.1:9/v1"
    assert start_model_preload() is None
    assert embedded_model_state() is None
    assert 'id="model-state"' not in admin_client.get("/status/").content.decode()


def test_the_embedded_model_alone_gets_the_edit_layout(settings):
    assert prompt_layout(None) == "edit"
    settings.MODEL_URL = "http://127.0.0.1:9/v1"
    settings.MODEL_NAME = "some-model"
    assert prompt_layout(None) == "plain"


def test_the_model_state_fragment_is_served_alone_and_polls_only_while_loading(
    admin_client: Client,
):
    fragment = admin_client.get("/status/model/").content.decode()
    assert 'data-phase="idle"' in fragment and "hx-trigger" not in fragment


def test_docs_are_served_as_text_and_unknown_names_are_not_found(admin_client: Client):
    assert "SGLang" in admin_client.get("/docs/sglang.md").content.decode()
    assert admin_client.get("/docs/absent.md").status_code == 404
