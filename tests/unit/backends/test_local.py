"""The local transformers backend with the embedded SmolLM2 model."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from simulator.backends import LocalBackend, ModelRequest, create_backend
from simulator.backends import local as local_module
from simulator.errors import BackendUnavailable
from simulator.parsing import OBS_CLOSE, OBS_OPEN
from simulator.types import Message, Sampling

from .conftest import LOAD_RECORD, wait_until

MESSAGES: tuple[Message, ...] = (
    {"role": "user", "content": "Describe a terminal session in detail."},
)


def local_backend(local_model) -> LocalBackend:
    path, cache_dir = local_model
    return LocalBackend(path, cache_dir=cache_dir)


def request(**sampling) -> ModelRequest:
    return ModelRequest(messages=MESSAGES, sampling=Sampling(**sampling))


async def text_of(backend: LocalBackend, model_request: ModelRequest) -> str:
    return "".join([c.text async for c in backend.stream(model_request) if c.kind == "content"])


def test_greedy_and_sampling_settings_map_onto_generate():
    tokenizer = SimpleNamespace(pad_token_id=None, eos_token_id=2)
    greedy = local_module.generation_kwargs(Sampling(temperature=0, max_tokens=9), tokenizer)
    sampled = local_module.generation_kwargs(Sampling(temperature=0.7, top_k=0), tokenizer)
    assert (greedy["do_sample"], greedy["max_new_tokens"], greedy["pad_token_id"]) == (False, 9, 2)
    assert (sampled["do_sample"], sampled["temperature"], sampled["top_k"]) == (True, 0.7, None)


def test_a_reasoning_budget_is_capped_for_the_small_cpu_model():
    tokenizer = SimpleNamespace(pad_token_id=0, eos_token_id=2)
    kwargs = local_module.generation_kwargs(Sampling(max_tokens=16384), tokenizer)
    assert kwargs["max_new_tokens"] == local_module.MAX_NEW_TOKENS < 16384


async def test_a_missing_model_is_unavailable_and_unhealthy(tmp_path):
    backend = LocalBackend(tmp_path / "absent.gguf")
    assert not (await backend.health()).ok
    with pytest.raises(BackendUnavailable):
        local_module.load_model_uncached(tmp_path / "absent.gguf")


@pytest.mark.slow
def test_the_gguf_loads_with_networking_refused(local_model):
    path, cache_dir = local_model
    assert LOAD_RECORD["source"] == "gguf"
    assert LOAD_RECORD["attempts"] == []
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    saved = [p for p in cache_dir.iterdir() if p.name.startswith(path.stem)]
    assert len(saved) == 1 and (saved[0] / "model.safetensors").is_file()


@pytest.mark.slow
def test_later_loads_use_the_converted_copy(local_model, monkeypatch):
    path, cache_dir = local_model

    def no_gguf(*args, **kwargs):
        raise AssertionError("the GGUF was converted again")

    monkeypatch.setattr(local_module, "_load_gguf", no_gguf)
    loaded = local_module.load_model_uncached(path, cache_dir=cache_dir)
    assert loaded.source == "cache"
    assert loaded.model.config.num_hidden_layers == 30


@pytest.mark.slow
async def test_closing_the_stream_stops_generation(local_model):
    backend = local_backend(local_model)
    stream: Any = backend.stream(request(temperature=0, max_tokens=200))  # an async generator
    await anext(stream)
    await stream.aclose()
    stopped_at = backend.tokens_generated
    await asyncio.sleep(0.3)
    assert 0 < stopped_at < 20
    assert backend.tokens_generated == stopped_at


@pytest.mark.slow
async def test_cancelling_the_consumer_stops_generation(local_model):
    backend = local_backend(local_model)

    async def consume() -> None:
        async for _ in backend.stream(request(temperature=0, max_tokens=200)):
            pass

    task = asyncio.create_task(consume())
    assert await wait_until(lambda: backend.tokens_generated >= 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stopped_at = backend.tokens_generated
    await asyncio.sleep(0.3)
    assert stopped_at < 30
    assert backend.tokens_generated == stopped_at


@pytest.mark.slow
async def test_greedy_and_seeded_sampling_repeat_themselves(local_model):
    backend = local_backend(local_model)
    greedy = [await text_of(backend, request(temperature=0, max_tokens=8)) for _ in range(2)]
    seeded = [
        await text_of(backend, request(temperature=1.0, max_tokens=8, seed=11)) for _ in range(2)
    ]
    assert greedy[0] and greedy[0] == greedy[1]
    assert seeded[0] and seeded[0] == seeded[1]


@pytest.mark.slow
async def test_info_describes_the_loaded_model(local_model):
    backend = local_backend(local_model)
    await backend.load()
    info = await backend.info()
    assert info["source"] == "gguf"
    assert info["context_length"] == 8192
    assert (await backend.health()).detail.endswith("loaded")


def test_the_embedded_tuning_caps_stops_and_drafts():
    tokenizer = SimpleNamespace(pad_token_id=0, eos_token_id=2)
    tuning = local_module.EMBEDDED_TUNING
    kwargs = local_module.generation_kwargs(Sampling(max_tokens=2048), tokenizer, tuning)
    assert kwargs["max_new_tokens"] == tuning.max_new_tokens < 1000
    assert kwargs["stop_strings"] == [OBS_CLOSE] and kwargs["tokenizer"] is tokenizer
    assert "prompt_lookup_num_tokens" not in kwargs
    drafting = local_module.SmallModelTuning(prompt_lookup_tokens=4)
    assert (
        local_module.generation_kwargs(Sampling(), tokenizer, drafting)["prompt_lookup_num_tokens"]
        == 4
    )
    assert tuning.prefill == OBS_OPEN and tuning.repetition_penalty > 1


def test_the_embedded_tuning_decodes_greedily_whatever_the_world_samples_at():
    tokenizer = SimpleNamespace(pad_token_id=0, eos_token_id=2)
    world = Sampling(temperature=0.6, top_p=0.95)
    tuned = local_module.generation_kwargs(world, tokenizer, local_module.EMBEDDED_TUNING)
    assert tuned["do_sample"] is False and tuned["temperature"] is None
    warm = local_module.SmallModelTuning(temperature=0.3)
    sampled = local_module.generation_kwargs(world, tokenizer, warm)
    assert sampled["do_sample"] is True and sampled["temperature"] == 0.3
    # Without a tuning (a model the user chose), the world's sampling stands.
    assert local_module.generation_kwargs(world, tokenizer)["temperature"] == 0.6


def test_only_the_embedded_model_gets_the_small_model_tuning(tmp_path):
    embedded = create_backend({"kind": "local", "cache_dir": str(tmp_path)})
    own = create_backend({"kind": "local", "model_path": str(tmp_path / "m.gguf")})
    assert isinstance(embedded, LocalBackend) and isinstance(own, LocalBackend)
    assert embedded.tuning is local_module.EMBEDDED_TUNING
    assert own.tuning is None


async def test_a_failed_background_load_is_reported(tmp_path):
    backend = LocalBackend(tmp_path / "absent.gguf")
    assert backend.load_state() is None
    backend.load_in_background().join()
    state = backend.load_state()
    assert state is not None and state.phase == "failed" and "absent.gguf" in state.error
    health = await backend.health()
    assert not health.ok and "failed to load" in health.detail


def test_a_load_requested_during_a_background_load_waits_for_it(tmp_path, monkeypatch):
    """The first step arriving while the studio's preload runs must not load a second copy."""
    release = threading.Event()
    calls: list[str] = []

    def slow_load(model_path, **kwargs):
        calls.append(str(model_path))
        release.wait(10)
        return SimpleNamespace(source="test")

    monkeypatch.setattr(local_module, "load_model_uncached", slow_load)
    backend = LocalBackend(tmp_path / "model.gguf")
    background = backend.load_in_background()
    assert wait_for(lambda: calls)
    assert backend.load_state() == local_module.LoadState("loading")
    results: list[object] = []
    step = threading.Thread(
        target=lambda: results.append(local_module.load_model(backend.model_path))
    )
    step.start()
    release.set()
    background.join()
    step.join()
    assert len(calls) == 1 and results[0] is local_module.load_model(backend.model_path)
    assert backend.load_state() == local_module.LoadState("ready")
    local_module._MODELS.pop(backend._key())


@pytest.mark.slow
async def test_the_tuned_answer_is_prefilled_and_stops_at_the_closing_tag(local_model):
    path, cache_dir = local_model
    tuning = local_module.SmallModelTuning(stop=("\n",), prompt_lookup_tokens=0)
    backend = LocalBackend(path, cache_dir=cache_dir, tuning=tuning)
    chunks = [c async for c in backend.stream(request(temperature=0, max_tokens=64))]
    texts = [c.text for c in chunks if c.kind == "content"]
    assert texts[0] == OBS_OPEN
    answer = "".join(texts[1:])
    assert answer.count("\n") <= 1 and (
        answer.endswith("\n") or chunks[-1].finish_reason == "length"
    )


def wait_for(condition, deadline_s: float = 10.0) -> bool:
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_the_tuned_answer_cannot_end_before_it_has_begun():
    import torch

    from simulator.backends._local_streaming import NoEarlyEnd

    processor = NoEarlyEnd([2, 5], prompt_length=4, steps=2)
    scores = cast(torch.FloatTensor, torch.zeros(1, 8))
    early = processor(cast(torch.LongTensor, torch.zeros(1, 5, dtype=torch.long)), scores)
    late = processor(
        cast(torch.LongTensor, torch.zeros(1, 6, dtype=torch.long)),
        cast(torch.FloatTensor, torch.zeros(1, 8)),
    )
    assert early[0, 2] == early[0, 5] == -float("inf") and early[0, 3] == 0
    assert bool(torch.all(late == 0))
