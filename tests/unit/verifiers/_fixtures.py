"""Observations from tests/fixtures (see SOURCES.md), loaded as each domain sees them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# (domain, path under tests/fixtures, expected format)
OBSERVATION_FILES = [
    ("web", "web/webarena_shopping_step1.axtree.txt", "axtree"),
    ("web", "web/webarena_shopping_step2.axtree.txt", "axtree"),
    ("web", "web/saucedemo_products.aria.yaml", "aria-yaml"),
    ("web", "web/duckduckgo_home.html", "html"),
    ("android", "android/uiautomator_youtube_home.xml", "uiautomator-xml"),
]

TAU_BENCH = FIXTURES / "mcp" / "tau_bench_airline_gpt-4o_record0_task0.json"


def read(relative: str) -> str:
    return (FIXTURES / relative).read_text(encoding="utf-8")


def terminal_triples() -> list[tuple[str, dict[str, Any]]]:
    """(file name, triple) for every terminal/swe triple."""
    return [
        (path.name, json.loads(path.read_text(encoding="utf-8")))
        for path in sorted((FIXTURES / "terminal_triples").glob("*.json"))
    ]


def tau_bench_messages() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads(TAU_BENCH.read_text(encoding="utf-8"))["traj"]
    return messages


def tau_bench_tool_results() -> list[str]:
    return [m["content"] for m in tau_bench_messages() if m["role"] == "tool"]


def tau_bench_tool_calls() -> list[dict[str, Any]]:
    return [
        call["function"]
        for m in tau_bench_messages()
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
    ]
