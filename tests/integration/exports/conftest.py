"""Data for export tests: episodes and traces with hostile text (unicode, ANSI, HTML, 100 KB)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from studio.core.models import Membership, Project
from studio.episodes.models import Episode, Step, StepStatus
from studio.traces.models import Trace, TraceTurn
from studio.worlds.services import scenario_create, world_create

HOSTILE = [
    "naïve café — 日本語のテキスト 🚀 \u2028 line sep, zero\u200bwidth",
    "\x1b[31mERROR\x1b[0m: build failed\r\n\x1b[1;32mok\x1b[0m\ttab",
    '<script>alert("x")</script><div onclick="evil()">&amp; &lt;b&gt;</div>',
    "x" * 50_000 + "\n" + "ü" * 60_000,  # > 100 KB
]


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("alice", "", "pw-12345678")


@pytest.fixture
def project(user):
    project = Project.objects.create(name="Source", slug="source")
    Membership.objects.create(project=project, user=user, role="owner")
    return project


def make_world(project, domain="terminal", title="Build box"):
    return world_create(
        project=project,
        spec={
            "domain": domain,
            "title": title,
            "premise": "A CI machine — «fictional»",
            "initial_observation": "user@box:~$ ",
            "extras": {"hostname": "box", "files": {"/etc/motd": "hi ✓"}},
        },
    )


def make_episode(project, *, domain="terminal", steps=4, with_scenario=True, **fields: Any):
    world = make_world(project, domain=domain, title=f"{domain} world")
    scenario = None
    if with_scenario:
        scenario = scenario_create(world=world, title="Flaky build ✓")
    episode = Episode.objects.create(
        project=project,
        scenario=scenario,
        world_revision=world.head,
        title=fields.pop("title", "Hostile episode ✓"),
        domain=domain,
        task="Fix the build — «vite»",
        perturbations=[{"kind": "error_injection", "mode": "enforced", "params": {}}],
        seed=7,
        agent={"kind": "human"},
        metadata=fields.pop("metadata", {"tags": ["hostile", "long"]}),
        **fields,
    )
    for i in range(1, steps + 1):
        observation = HOSTILE[(i - 1) % len(HOSTILE)]
        Step.objects.create(
            episode=episode,
            index=i,
            action=f"cat notes-{i}.txt  # ✓ <b>{i}</b>",
            status=StepStatus.DONE,
            observation=observation,
            reasoning=f"thinking about step {i} — ‹reasoning›",
            raw_output=f"<think>r{i}</think>{observation[:100]}",
            firings=[
                {
                    "index": 0,
                    "kind": "instruction",
                    "mode": "prompted",
                    "summary": "told to fail",
                    "details": {"instruction": "Make it fail ✗"},
                    "changed": True,
                }
            ]
            if i == 2
            else [],
            verifiers=[{"name": "ansi", "passed": i != 2, "reason": "checked ✓"}],
            telemetry={
                "queued_s": 0.01,
                "first_token_s": 0.2,
                "done_s": 1.5,
                "prompt_tokens": 100 * i,
                "completion_tokens": 20,
                "reasoning_tokens": 5,
                "cached_tokens": None,
                "finish_reason": "stop",
                "notes": [],
                "ws_messages": 12,
                "outcome": "no criteria",
            },
            reward=1.0 if i == steps else 0.0,
            terminated=i == steps,
        )
    # A failed step is not part of the history, so it is never exported.
    Step.objects.create(
        episode=episode, index=steps + 1, action="boom", status=StepStatus.FAILED, error="x"
    )
    return episode


def make_trace(project, *, turns=3, external_id='"t-1"'):
    trace = Trace.objects.create(
        project=project,
        domain="mcp",
        source="awb",
        task="agentworld/mcp",
        external_id=external_id,
        title="agentworld/mcp #t-1",
        content_hash=f"hash-{external_id}",
        system_prompt="You simulate an MCP server ✓ <b>bold</b>",
        metadata={"initial_state": "tools: [search]", "total_turns": turns},
    )
    for i in range(1, turns + 1):
        TraceTurn.objects.create(
            trace=trace,
            index=i,
            action=f'{{"name": "search", "arguments": {{"q": "ü{i}"}}}}',
            observation=HOSTILE[(i - 1) % len(HOSTILE)],
        )
    return trace
