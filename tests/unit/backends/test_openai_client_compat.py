"""The official ``openai`` client talks to the protocol test server: proof the protocol matches."""

from __future__ import annotations

import openai
from openai.types.chat import ChatCompletionMessageParam


def client_for(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.base_url}/v1", api_key="unused", max_retries=0)


MESSAGES: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": '**Action:**\n```json\n{"tool": "search", "q": "x"}\n```'}
]


def test_the_official_client_streams_reasoning_content_and_usage(reasoning_server):
    client = client_for(reasoning_server)
    stream = client.chat.completions.create(
        model="m",
        messages=MESSAGES,
        stream=True,
        max_tokens=200,
        stream_options={"include_usage": True},
    )
    content, reasoning, usage, finish = [], [], None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            content.append(choice.delta.content or "")
            reasoning.append(getattr(choice.delta, "reasoning_content", None) or "")
            finish = choice.finish_reason or finish
    assert "".join(content) == (
        '<predicted_observation>{"ok": true, "echo": {"tool": "search", "q": "x"}}'
        "</predicted_observation>"
    )
    assert "".join(reasoning).startswith("The agent acted")
    assert finish == "stop"
    assert usage is not None and usage.completion_tokens > 0
    details = usage.completion_tokens_details
    assert details is not None and (details.reasoning_tokens or 0) > 0


def test_the_official_client_reads_a_whole_answer_and_the_model_list(server):
    client = client_for(server)
    answer = client.chat.completions.create(model="m", messages=MESSAGES, max_tokens=3)
    assert answer.choices[0].message.content == "<predicted_o"  # 3 tokens of 4 characters
    assert answer.choices[0].finish_reason == "length"
    assert answer.usage is not None and answer.usage.completion_tokens == 3
    assert [m.id for m in client.models.list()] == ["world-studio-test"]


def test_the_official_client_sees_injected_errors_as_its_own_exceptions(fresh_server):
    client = client_for(fresh_server)
    try:
        client.chat.completions.create(model="fault:429", messages=MESSAGES)
    except openai.RateLimitError as exc:
        assert exc.status_code == 429
    else:
        raise AssertionError("no RateLimitError")
