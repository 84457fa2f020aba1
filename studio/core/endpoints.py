"""The world-model endpoint the studio uses when a world or scenario names none, and
how requests to an endpoint are laid out.

An endpoint's prompt layout (:data:`simulator.types.PromptLayout`) is studio
configuration, not a backend setting: it lives in ``ModelEndpoint.config`` under
:data:`PROMPT_LAYOUT_KEY`, is never passed to ``create_backend`` (which refuses
keys it does not know), and defaults by model name, because only
Qwen-AgentWorld was trained on the ``agentworld`` layout. The embedded demo
model always gets the ``edit`` layout, written for a model of its size.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.conf import settings

from simulator.backends import Backend, create_backend
from simulator.backends.openai_http import chat_completions_url
from simulator.official_prompts import OfficialPrompts, PromptFileError
from simulator.types import PROMPT_LAYOUTS, PromptLayout

if TYPE_CHECKING:
    # Types only: studio.core.models imports this module for the layout key.
    from studio.core.models import ModelEndpoint

logger = logging.getLogger(__name__)

PROMPT_LAYOUT_KEY = "prompt_layout"
#: ``ModelEndpoint.config`` key: how many model calls one process keeps in flight to it.
MAX_IN_FLIGHT_KEY = "max_in_flight"


def default_endpoint_spec() -> dict[str, Any]:
    """The deployment's endpoint: STUDIO_MODEL_URL if set, else the embedded CPU model."""
    if settings.MODEL_URL:
        return {
            "kind": "openai",
            "base_url": settings.MODEL_URL,
            "model": settings.MODEL_NAME,
            "api_key": settings.MODEL_API_KEY,
        }
    return {"kind": "local", "cache_dir": str(settings.MODEL_CACHE_DIR)}


def describe_spec(spec: dict[str, Any]) -> str:
    """Where an endpoint points, without its API key: for a server, the URL actually called.

    ``base_url`` may be written with or without ``/v1``; showing the URL the
    backend posts to settles which one a deployment really uses.
    """
    if spec["kind"] == "openai":
        return f"{chat_completions_url(spec['base_url'])} ({spec.get('model', '')})"
    if spec["kind"] == "local":
        return f"local: {spec.get('model_path') or 'embedded SmolLM2-135M-Instruct'}"
    return str(spec["kind"])


def is_demo_model(spec: dict[str, Any]) -> bool:
    """Whether ``spec`` is the embedded SmolLM2: a demo model, far from a real world model."""
    return spec["kind"] == "local" and not spec.get("model_path")


def default_backend() -> Backend:
    return create_backend(default_endpoint_spec())


def in_flight_limit(endpoint: ModelEndpoint | None) -> int:
    """How many model calls a process keeps in flight to ``endpoint`` at once.

    Sized for what the model server batches (an SGLang server takes hundreds of
    concurrent requests), not for the number of workers: in-flight calls are
    coroutines. An endpoint may set its own (``config["max_in_flight"]``), e.g. a
    hosted API with a low concurrency quota.
    """
    chosen = endpoint.config.get(MAX_IN_FLIGHT_KEY) if endpoint is not None else None
    if isinstance(chosen, int) and not isinstance(chosen, bool) and chosen > 0:
        return chosen
    return int(settings.ENDPOINT_MAX_IN_FLIGHT)


def layout_for_model(model: str) -> PromptLayout:
    """The layout a model gets unless its endpoint says otherwise.

    Qwen-AgentWorld models (any name containing "agentworld") get the layout all
    their published results were measured in; any other model (the embedded
    SmolLM2) gets ``plain``, which needs no knowledge of the benchmark's turns.
    """
    return "agentworld" if "agentworld" in model.lower() else "plain"


def prompt_layout(endpoint: ModelEndpoint | None) -> PromptLayout:
    """The layout of requests to ``endpoint`` (None: the deployment's default endpoint)."""
    spec = default_endpoint_spec() if endpoint is None else endpoint.to_spec()
    if is_demo_model(spec):
        return "edit"
    if endpoint is None:
        return layout_for_model(str(spec.get("model", "")))
    chosen = endpoint.config.get(PROMPT_LAYOUT_KEY)
    for layout in PROMPT_LAYOUTS:
        if chosen == layout:
            return layout
    return layout_for_model(endpoint.model)


def request_layout(endpoint: ModelEndpoint | None, domain: str) -> tuple[PromptLayout, str | None]:
    """The layout of requests to ``endpoint`` for a ``domain`` world, and the official
    system template to fill (agentworld layout only; None: the domain's own prompt)."""
    layout = prompt_layout(endpoint)
    return layout, official_system_template(domain) if layout == "agentworld" else None


def official_system_template(domain: str) -> str | None:
    """``<AGENTWORLD_PROMPTS>/<domain>/system_prompt.txt``, or None when unset or missing.

    A deployment that points ``STUDIO_AGENTWORLD_PROMPTS`` at a Qwen-AgentWorld
    checkout's ``prompts/`` folder runs agentworld-layout episodes on the
    model's own system prompts; a domain without one keeps the studio's prompt
    (logged, so a misplaced folder is noticed) rather than failing its steps.
    """
    if not settings.AGENTWORLD_PROMPTS:
        return None
    try:
        return OfficialPrompts(settings.AGENTWORLD_PROMPTS).system_prompt(domain)
    except PromptFileError as error:
        logger.warning("no official system prompt for %s: %s", domain, error)
        return None
