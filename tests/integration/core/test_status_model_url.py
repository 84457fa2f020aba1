"""The status page shows the URL a chat request is really posted to, however it was written."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from simulator.serve.app import ServerOptions
from simulator.serve.threaded import start_server_in_thread

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("suffix", ["", "/v1", "/v1/"])
def test_the_status_page_shows_the_chat_url_called_with_or_without_v1(settings, suffix):
    with start_server_in_thread(ServerOptions()) as server:
        settings.MODEL_URL = server.base_url.rstrip("/") + suffix
        settings.MODEL_NAME = "Qwen/Qwen-AgentWorld-35B-A3B"
        client = Client()
        client.force_login(get_user_model().objects.create_user("alice", "", "pw-12345678"))

        page = client.get("/status/").content.decode()
        health = client.get("/healthz").json()["world_model"]

    called = f"{server.base_url.rstrip('/')}/v1/chat/completions"
    assert f"{called} (Qwen/Qwen-AgentWorld-35B-A3B), agentworld prompt layout" in page
    assert "/v1/v1" not in page
    assert health["ok"] is True and health["endpoint"].startswith(called)
    assert health["prompt_layout"] == "agentworld"
