"""The protocol test server itself: routes, faults, replay, command line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from simulator.serve import parse_fault, start_server_in_thread
from simulator.serve.__main__ import options_from_args, parse_args
from simulator.serve.replies import last_action

from .conftest import free_port

AWB = Path(__file__).parents[2] / "fixtures" / "agentworldbench" / "synthetic_terminal.jsonl"


def test_fault_specs_parse_and_bad_ones_are_refused():
    assert parse_fault("disconnect-after:5").count == 5
    assert parse_fault("500-once").once and parse_fault("500-once").status == 500
    assert parse_fault("stall").status is None
    for bad in ("disconnect-after", "500:3", "stall-after:x", "teapot"):
        with pytest.raises(ValueError):
            parse_fault(bad)


def test_the_action_is_taken_from_the_awb_prompt_shape():
    rows = [json.loads(line) for line in AWB.read_text().splitlines()]
    action = last_action([{"role": "user", "content": rows[1]["prompt"][-1]}])
    assert json.loads(action) == [{"keystrokes": "cd tests\n", "duration": 0.1}]


def test_the_x_fault_header_injects_a_fault(fresh_server):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    url = f"{fresh_server.base_url}/v1/chat/completions"
    failed = httpx.post(url, json=body, headers={"X-Fault": "500-once"})
    passed = httpx.post(url, json=body, headers={"X-Fault": "500-once"})
    assert failed.status_code == 500
    assert failed.json()["error"]["message"] == "injected fault"
    assert passed.status_code == 200


def test_unknown_routes_and_bad_bodies_get_json_errors(server):
    assert httpx.get(f"{server.base_url}/nope").status_code == 404
    bad = httpx.post(f"{server.base_url}/v1/chat/completions", json={"messages": []})
    assert bad.status_code == 400
    assert "messages" in bad.json()["error"]["message"]
    assert httpx.get(f"{server.base_url}/health").status_code == 200
    assert httpx.get(f"{server.base_url}/get_model_info").json()["is_generation"] is True


def test_replay_answers_turn_k_with_observation_k():
    args = parse_args(["--port", "0", "--replay", str(AWB)])
    rows = [json.loads(line) for line in AWB.read_text().splitlines()]
    with start_server_in_thread(options_from_args(args)) as running:
        messages = [
            {"role": "user", "content": rows[1]["prompt"][0]},
            {"role": "assistant", "content": rows[1]["response"][0]},
            {"role": "user", "content": rows[1]["prompt"][1]},
        ]
        body = {"model": "m", "messages": messages, "max_tokens": 1000}
        answer = httpx.post(f"{running.base_url}/v1/chat/completions", json=body).json()
        too_far = httpx.post(
            f"{running.base_url}/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "x"}] * 4},
        )
    content = answer["choices"][0]["message"]["content"]
    assert content == f"<predicted_observation>{rows[1]['response'][-1]}</predicted_observation>"
    assert too_far.status_code == 400


def test_command_line_flags_map_onto_options():
    args = parse_args(
        [
            "--port",
            "1",
            "--latency-ms",
            "5",
            "--tokens-per-s",
            "100",
            "--reasoning",
            "--fail-rate",
            "0.5",
            "--seed",
            "3",
        ]
    )
    options = options_from_args(args)
    assert (options.latency_ms, options.tokens_per_s, options.reasoning) == (5, 100, True)
    assert (options.fail_rate, options.seed, options.replay) == (0.5, 3, None)


@pytest.mark.slow
def test_python_dash_m_simulator_serve_answers_health():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator.serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        status = None
        while status is None and time.monotonic() < deadline:
            try:
                status = httpx.get(f"http://127.0.0.1:{port}/health").status_code
            except httpx.ConnectError:
                time.sleep(0.1)
        assert status == 200
    finally:
        process.terminate()
        process.wait(timeout=10)
