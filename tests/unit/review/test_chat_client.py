from __future__ import annotations

import httpx
import pytest

from simulator.chat_client import ChatClient
from simulator.serve import ServerOptions
from simulator.serve.threaded import start_server_in_thread
from simulator.types import Message, Sampling

MESSAGES: list[Message] = [{"role": "system", "content": "s"}, {"role": "user", "content": "ls"}]


async def test_it_sends_only_eval_py_fields_to_either_base_url_spelling():
    sampling = Sampling(temperature=0.25, top_p=0.9, top_k=20, max_tokens=77, seed=3)
    with start_server_in_thread(ServerOptions(replay=["out"])) as server:
        for base in (server.base_url, server.base_url + "/v1"):
            client = ChatClient(base, "m", "EMPTY")
            try:
                text = await client.complete(MESSAGES, sampling)
            finally:
                await client.aclose()
            assert text == "<predicted_observation>out</predicted_observation>"
        bodies = list(server.state.requests)
    expected = {"model": "m", "messages": MESSAGES, "max_tokens": 77, "temperature": 0.25}
    assert bodies == [expected, expected]


async def test_it_retries_server_errors_twice_like_the_openai_sdk():
    with start_server_in_thread() as server:
        client = ChatClient(server.base_url, "fault:500-once", backoff_s=0)
        try:
            assert await client.complete(MESSAGES, Sampling())
            assert server.state.hits["fault:500-once"] == 2
            client.model = "fault:500"
            with pytest.raises(httpx.HTTPStatusError):
                await client.complete(MESSAGES, Sampling())
            assert server.state.hits["fault:500"] == 3  # one call and two retries
        finally:
            await client.aclose()
