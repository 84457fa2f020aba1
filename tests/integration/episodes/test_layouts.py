"""Live episodes in each endpoint's prompt layout, and steps cut off by max_tokens."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from simulator.awb_turns import INSTRUCTION, OBSERVATION_MARKER
from simulator.perturbations import Perturbation, Trigger
from simulator.prompting import CONTROL_OPEN
from studio.core.endpoints import official_system_template
from studio.core.models import ModelEndpoint
from studio.episodes import services
from studio.episodes.models import Step
from studio.exports.records import EpisodeItem, trajectory_record
from tests.integration.episodes import helpers

pytestmark = pytest.mark.django_db(transaction=True)

DISK_FULL = Perturbation(
    "instruction", "prompted", {"text": "Say the disk is full."}, Trigger(2, 2)
)


def run_steps(episode, actions: list[str]) -> list[Step]:
    steps = []
    for action in actions:
        step = helpers.wait_for_step(services.step_submit(episode=episode, action=action).pk)
        assert step.status == "done", step.error
        steps.append(step)
    return steps


def page(user, episode) -> str:
    client = Client()
    client.force_login(user)
    return client.get(f"/episodes/{episode.pk}/").content.decode()


def test_an_agentworld_endpoint_gets_benchmark_turns_each_request_extending_the_last(
    model_server,
):
    project, user = helpers.project_with()
    model = helpers.endpoint(project, model_server.base_url, prompt_layout="agentworld")
    episode = helpers.episode(project, user, model=model, perturbations=[DISK_FULL.to_dict()])

    steps = run_steps(episode, ["pwd", "ls -la", "whoami"])

    requests = [body["messages"] for body in model_server.state.requests]
    assert len(requests) == 3
    first, second, third = requests
    assert "alice@box" not in first[0]["content"]  # the initial state is in turn 1 instead
    assert first[1] == {
        "role": "user",
        "content": "### Turn 1\n**Current State:**\nalice@box:/srv/app$ \n\n"
        "**Action:**\n```json\npwd\n```" + INSTRUCTION,
    }
    assert third[1]["content"] == first[1]["content"].removesuffix(INSTRUCTION)
    assert third[2] == {
        "role": "assistant",
        "content": f"{OBSERVATION_MARKER}\n{steps[0].observation}",
    }
    assert third[3]["content"] == "### Turn 2\n**Action:**\n```json\nls -la\n```"
    assert third[5]["content"] == "### Turn 3\n**Action:**\n```json\nwhoami\n```" + INSTRUCTION
    # The control text was in turn 2 while it was current, ahead of the instruction, and only then.
    assert second[-1]["content"].startswith(third[3]["content"] + "\n\n" + CONTROL_OPEN)
    assert second[-1]["content"].endswith(
        "- Say the disk is full.\n</simulation_control>" + INSTRUCTION
    )
    assert all(CONTROL_OPEN not in m["content"] for m in third)
    for request in requests:
        assert [INSTRUCTION in m["content"] for m in request].count(True) == 1
        assert request[-1]["content"].endswith(INSTRUCTION)
    # Append-only: each request repeats the previous one up to its last (answered) turn.
    for before, after in zip(requests, requests[1:], strict=False):
        assert after[: len(before) - 1] == before[:-1]
        assert before[-1]["content"].startswith(after[len(before) - 1]["content"])
    assert all(step.telemetry["prompt_layout"] == "agentworld" for step in steps)
    assert page(user, episode).count("agentworld layout") == 3
    # An export carries the requests exactly as they were sent.
    exported = trajectory_record(EpisodeItem(episode, steps))
    assert [step["messages"] for step in exported["steps"]] == requests


def test_the_layout_defaults_by_model_name_and_plain_stays_bare(model_server):
    project, user = helpers.project_with()
    qwen = helpers.endpoint(project, model_server.base_url)
    qwen.model = "Qwen/Qwen-AgentWorld-35B-A3B"
    qwen.save()
    other = helpers.endpoint(project, model_server.base_url)
    forced = helpers.endpoint(project, model_server.base_url, prompt_layout="plain")
    forced.model = qwen.model
    forced.save()
    assert [e.prompt_layout for e in (qwen, other, forced)] == ["agentworld", "plain", "plain"]
    assert "prompt_layout" not in forced.to_spec()  # create_backend refuses unknown keys

    run_steps(helpers.episode(project, user, model=qwen), ["pwd"])
    run_steps(helpers.episode(project, user, model=other), ["pwd"])

    agentworld, plain = (body["messages"] for body in model_server.state.requests)
    assert agentworld[-1]["content"].startswith("### Turn 1\n")
    assert plain[1:] == [{"role": "user", "content": "pwd"}]
    assert "alice@box:/srv/app$" in plain[0]["content"]


def test_an_official_system_prompt_is_used_when_configured(model_server, settings, tmp_path: Path):
    (tmp_path / "terminal").mkdir()
    (tmp_path / "terminal" / "system_prompt.txt").write_text(
        'You are a terminal. Tools: {tool_definitions}. Examples: {demonstrations}. {"json": 1}'
    )
    settings.AGENTWORLD_PROMPTS = str(tmp_path)
    project, user = helpers.project_with()
    agentworld = helpers.endpoint(project, model_server.base_url, prompt_layout="agentworld")
    plain = helpers.endpoint(project, model_server.base_url)

    run_steps(helpers.episode(project, user, model=agentworld), ["pwd"])
    run_steps(helpers.episode(project, user, model=plain), ["pwd"])

    official, own = (body["messages"][0]["content"] for body in model_server.state.requests)
    assert official == 'You are a terminal. Tools: . Examples: . {"json": 1}'
    assert own.startswith("# Your role")
    # A domain the folder has no prompt for keeps the studio's own.
    assert official_system_template("os") is None
    assert official_system_template("terminal") is not None


def test_a_step_cut_off_before_its_observation_is_a_retryable_cut_off_not_malformed(
    model_server,
):
    project, user = helpers.project_with()
    model = helpers.endpoint(project, model_server.base_url)
    episode = helpers.episode(project, user, model=model)
    episode.sampling = {"max_tokens": 3}  # the test server reasons first: cut inside reasoning
    episode.save()

    step = helpers.wait_for_step(services.step_submit(episode=episode, action="make").pk)

    assert step.status == "failed" and step.error_kind == "OutputCutOff"
    assert step.error.startswith("cut off (max_tokens 3)")
    assert step.partial_reasoning and not step.partial_observation  # reasoning in its own pane
    html = page(user, episode)
    assert "Cut off (max_tokens 3)" in html and "Malformed" not in html
    assert f"Retry step {step.index}" in html


def test_a_step_cut_off_inside_its_observation_is_done_with_a_cut_off_badge(model_server):
    project, user = helpers.project_with()
    episode = helpers.episode(project, user, model=helpers.endpoint(project, model_server.base_url))
    episode.sampling = {"max_tokens": 20}  # past the reasoning, into the observation
    episode.save()

    step = helpers.wait_for_step(services.step_submit(episode=episode, action="make").pk)

    assert step.status == "done" and step.telemetry["finish_reason"] == "length"
    assert step.observation
    assert "cut off (max_tokens 20)" in page(user, episode)


def test_the_endpoint_admin_form_edits_the_layout_inside_config():
    from studio.core.admin import ModelEndpointForm

    endpoint = ModelEndpoint.objects.create(
        name="qwen", kind="openai", base_url="http://127.0.0.1:30000", config={"timeout": 5}
    )
    form = ModelEndpointForm(
        instance=endpoint,
        data={
            "name": "qwen",
            "kind": "openai",
            "base_url": "http://127.0.0.1:30000",
            "model": "Qwen/Qwen-AgentWorld-35B-A3B",
            "config": '{"timeout": 5}',
            "prompt_layout": "plain",
        },
    )
    assert form.is_valid(), form.errors
    form.save()
    endpoint.refresh_from_db()
    assert endpoint.config == {"timeout": 5, "prompt_layout": "plain"}
    assert endpoint.prompt_layout == "plain"
    assert ModelEndpointForm(instance=endpoint).initial["prompt_layout"] == "plain"


def test_sampling_overrides_from_the_form_reach_the_request_and_blanks_are_not_sent(
    model_server,
):
    from studio.worlds.forms import sampling_from_post, sampling_values

    assert sampling_values(None) == {
        "temperature": "0.6",
        "top_p": "",
        "top_k": "",
        "max_tokens": "16384",
        "seed": "",
    }
    parsed = sampling_from_post(
        {
            "sampling-override": "on",
            "sampling-temperature": "0.3",
            "sampling-top_p": "",
            "sampling-top_k": " ",
            "sampling-max_tokens": "300",
            "sampling-seed": "",
        }
    )
    assert parsed.ok
    project, user = helpers.project_with()
    model = helpers.endpoint(project, model_server.base_url)
    overridden = helpers.episode(project, user, model=model)
    overridden.sampling = parsed.data["sampling"]
    overridden.save()

    run_steps(overridden, ["pwd"])
    run_steps(helpers.episode(project, user, model=model), ["pwd"])

    chosen, default = model_server.state.requests
    assert (chosen["temperature"], chosen["max_tokens"]) == (0.3, 300)
    assert default["max_tokens"] == 16384
    for body in (chosen, default):
        assert not {"top_p", "top_k", "seed"} & set(body)
