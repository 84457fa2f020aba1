"""Local backend overhead and load times, against raw transformers on the same model.

Prints (1) the local backend's tokens/s divided by raw ``model.generate`` tokens/s
on the same model, prompt and thread count (greedy, 64 new tokens, best of a few
interleaved runs; goal >= 0.95), and (2) the cold load (GGUF -> dequantise -> save
safetensors) against the warm load (the saved copy). Nothing here is asserted.

    .venv/bin/python benchmarks/local_backend.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.backends.base import ModelRequest  # noqa: E402
from simulator.backends.local import (  # noqa: E402
    LoadedModel,
    LocalBackend,
    embedded_model_path,
    load_model,
    load_model_uncached,
)
from simulator.types import Message, Sampling  # noqa: E402

NEW_TOKENS = 64
MESSAGES: tuple[Message, ...] = (
    {"role": "system", "content": "You simulate a Linux terminal."},
    {"role": "user", "content": "Write a long story about a terminal session, step by step."},
)


def raw_generate(loaded: LoadedModel) -> tuple[int, float]:
    """Tokens and seconds of plain ``generate``, run in a worker thread like the backend's."""
    inputs = loaded.tokenizer.apply_chat_template(
        list(MESSAGES), add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    result: dict[str, float] = {}

    def work() -> None:
        started = time.perf_counter()
        output = loaded.model.generate(
            **inputs,
            max_new_tokens=NEW_TOKENS,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
        )
        result["seconds"] = time.perf_counter() - started
        result["tokens"] = output.shape[1] - inputs["input_ids"].shape[1]

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return int(result["tokens"]), result["seconds"]


async def backend_generate(backend: LocalBackend) -> tuple[int, float]:
    request = ModelRequest(
        messages=MESSAGES, sampling=Sampling(temperature=0, max_tokens=NEW_TOKENS)
    )
    started = time.perf_counter()
    tokens = 0
    async for chunk in backend.stream(request):
        if chunk.kind == "usage" and chunk.usage is not None:
            tokens = chunk.usage.completion_tokens
    return tokens, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    import torch

    path = embedded_model_path()
    with tempfile.TemporaryDirectory() as cache:
        cold = load_model_uncached(path, cache_dir=Path(cache))
        warm = load_model_uncached(path, cache_dir=Path(cache))
    print(f"cold load (GGUF, convert, save): {cold.load_seconds:.2f} s")
    print(f"warm load (safetensors copy):    {warm.load_seconds:.2f} s")
    print(f"cold / warm: {cold.load_seconds / warm.load_seconds:.1f}x")

    loaded = load_model(path)
    backend = LocalBackend(path)
    print(f"torch threads: {torch.get_num_threads()}")
    raw_generate(loaded)  # warm-up: first calls allocate
    asyncio.run(backend_generate(backend))
    raw_rates, backend_rates = [], []
    for _ in range(args.runs):
        tokens, seconds = raw_generate(loaded)
        raw_rates.append(tokens / seconds)
        tokens, seconds = asyncio.run(backend_generate(backend))
        backend_rates.append(tokens / seconds)
    raw, ours = max(raw_rates), max(backend_rates)
    print(f"raw generate: {raw:.1f} tokens/s (runs: {', '.join(f'{r:.1f}' for r in raw_rates)})")
    print(
        f"LocalBackend: {ours:.1f} tokens/s (runs: {', '.join(f'{r:.1f}' for r in backend_rates)})"
    )
    print(f"ratio LocalBackend / raw: {ours / raw:.3f} (goal >= 0.95)")


if __name__ == "__main__":
    main()
