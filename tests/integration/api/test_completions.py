from __future__ import annotations

import json

import pytest

from studio.api.models import CompletionSession
from studio.episodes.models import Episode

pytestmark = pytest.mark.django_db(transaction=True)


def chat(api, model, messages, **extra):
    body = {"model": model, "messages": messages, **extra}
    return api.post("/v1/chat/completions", json.dumps(body), content_type="application/json")


def test_models_lists_scenarios(api, scenario):
    data = api.get("/v1/models").json()

    assert data["object"] == "list"
    assert [m["id"] for m in data["data"]] == [f"scenario-{scenario.pk}"]


def test_a_conversation_is_an_episode_continued_by_its_prefix(api, scenario, world_model):
    model = f"scenario-{scenario.pk}"
    system = {"role": "system", "content": "You are a build agent."}
    first = chat(api, model, [system, {"role": "user", "content": "make"}]).json()
    observation = first["choices"][0]["message"]["content"]
    convo = [
        system,
        {"role": "user", "content": "make"},
        {"role": "assistant", "content": observation},
        {"role": "user", "content": "echo BUILD OK"},
    ]
    second = chat(api, model, convo).json()
    stranger = chat(api, model, [*convo[:2], {"role": "assistant", "content": "made up"}, convo[3]])

    assert "make" in observation and first["world_studio"]["step"] == 1
    assert second["world_studio"]["episode_id"] == first["world_studio"]["episode_id"]
    assert second["world_studio"]["step"] == 2
    assert second["world_studio"]["terminated"] is True and second["world_studio"]["reward"] == 1.0
    assert stranger.status_code == 409
    assert stranger.json()["error"]["code"] == "conversation_mismatch"
    episode = Episode.objects.get(pk=first["world_studio"]["episode_id"])
    assert episode.source == "completions"
    assert [s.action for s in episode.steps.order_by("index")] == ["make", "echo BUILD OK"]


def test_a_user_field_names_the_session(api, scenario, world_model):
    model = f"scenario-{scenario.pk}"
    first = chat(api, model, [{"role": "user", "content": "ls"}], user="run-1").json()
    observation = first["choices"][0]["message"]["content"]
    again = chat(
        api,
        model,
        [
            {"role": "user", "content": "ls"},
            {"role": "assistant", "content": observation},
            {"role": "user", "content": "pwd"},
        ],
        user="run-1",
    ).json()

    assert again["world_studio"]["episode_id"] == first["world_studio"]["episode_id"]
    assert CompletionSession.objects.get().user_key == "run-1"


def test_bad_requests_are_4xx(api, scenario):
    model = f"scenario-{scenario.pk}"

    assert chat(api, "gpt-4", [{"role": "user", "content": "ls"}]).status_code == 404
    assert chat(api, "scenario-424242", [{"role": "user", "content": "ls"}]).status_code == 404
    assert chat(api, model, []).status_code == 400
    assert chat(api, model, [{"role": "assistant", "content": "hi"}]).status_code == 400
    assert chat(api, model, [{"role": "user", "content": 3}]).status_code == 400
    assert chat(api, model, [{"role": "user", "content": "ls"}], stream="yes").status_code == 400


async def test_streaming_sends_openai_chunks(async_client, token, scenario, world_model):
    body = {
        "model": f"scenario-{scenario.pk}",
        "messages": [{"role": "user", "content": "make"}],
        "stream": True,
    }
    response = await async_client.post(
        "/v1/chat/completions",
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    text = b"".join([chunk async for chunk in response.streaming_content]).decode()

    events = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    chunks = [json.loads(e) for e in events[:-1]]
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert response["Content-Type"] == "text/event-stream"
    assert events[-1] == "[DONE]"
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert "make" in content and chunks[-1]["choices"][0]["finish_reason"] == "stop"
