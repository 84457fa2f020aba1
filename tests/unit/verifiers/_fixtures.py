"""Observations from tests/fixtures (see SOURCES.md), loaded as each domain sees them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from simulator.episode import browsergym_log_actions, browsergym_log_trees

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
WEBARENA_LOG = "web/browsergym_webarena_190_12_shopping.log"
PLAYWRIGHT_MCP_RESULT = "web/playwright_mcp_saucedemo_products.md"

_YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def read(relative: str) -> str:
    return (FIXTURES / relative).read_text(encoding="utf-8")


def terminal_triples() -> list[tuple[str, dict[str, Any]]]:
    """(file name, triple) for every terminal/swe triple."""
    return [
        (path.name, json.loads(path.read_text(encoding="utf-8")))
        for path in sorted((FIXTURES / "terminal_triples").glob("*.json"))
    ]


def webarena_log_trees() -> list[str]:
    """Every accessibility tree the BrowserGym WebArena log shows the agent, step by step."""
    return browsergym_log_trees(read(WEBARENA_LOG))


def webarena_log_actions() -> list[str]:
    """The action the agent took after each tree of the log (``click("227")``, ...)."""
    return browsergym_log_actions(read(WEBARENA_LOG))


def playwright_mcp_snapshots() -> list[str]:
    """The ARIA snapshot YAML blocks of the Playwright-MCP tool result."""
    return _YAML_BLOCK.findall(read(PLAYWRIGHT_MCP_RESULT))


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
