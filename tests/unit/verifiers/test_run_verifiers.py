"""run_verifiers: the checks that need the action, the previous observation or the world."""

from __future__ import annotations

import json
import subprocess
import sys

from simulator.domains import get_domain
from simulator.domains.web import WebDomain
from simulator.verifiers import VerifierResult, run_verifiers
from simulator.world import World
from tests.unit.verifiers._fixtures import read

STEP1 = read("web/webarena_shopping_step1.axtree.txt")
STEP2 = read("web/webarena_shopping_step2.axtree.txt")
ARIA = read("web/saucedemo_products.aria.yaml")
HTML = read("web/duckduckgo_home.html")
XML = read("android/uiautomator_youtube_home.xml")
WEB = World(domain="web", title="One Stop Market", initial_observation=STEP1)


def _by_name(results: list[VerifierResult]) -> dict[str, VerifierResult]:
    return {result.name: result for result in results}


def test_it_passes_the_real_next_page_after_a_click_on_an_existing_bid():
    action = get_domain("web").parse_action('click("227")', WEB)

    results = _by_name(run_verifiers("web", STEP2, action=action, previous=STEP1))

    assert results["ids_exist"].passed
    assert results["keeps_representation"].reason == "axtree, like the previous observation"
    assert all(result.passed for result in results.values())


def test_it_fails_a_click_on_a_bid_missing_from_the_previous_page():
    action = get_domain("web").parse_action('click("99999")', WEB)

    result = _by_name(run_verifiers("web", STEP2, action=action, previous=STEP1))["ids_exist"]

    assert not result.passed
    assert "'99999'" in result.reason


def test_it_checks_aria_refs_and_skips_pages_without_ids():
    domain = get_domain("web")
    on_aria = run_verifiers(
        domain, ARIA, action=domain.parse_action("click('s5e44')", WEB), previous=ARIA
    )
    on_html = run_verifiers(
        domain, HTML, action=domain.parse_action("click('1')", WEB), previous=HTML
    )
    bare = run_verifiers(domain, ARIA, action=domain.parse_action("go_back()", WEB), previous=ARIA)

    assert _by_name(on_aria)["ids_exist"].passed
    assert "ids_exist" not in _by_name(on_html)
    assert "ids_exist" not in _by_name(bare)


def test_it_finds_bids_in_html_attributes():
    page = '<html><body><button bid="a7">Go</button><input bid="a8"/></body></html>'

    assert WebDomain().ids_in(page) == {"a7", "a8"}
    assert WebDomain().ids_in("no page here") == set()


def test_it_fails_a_web_page_that_switches_representation():
    result = _by_name(run_verifiers("web", HTML, previous=STEP1))["keeps_representation"]

    assert not result.passed
    assert result.reason == "the previous observation was axtree, this one is html"


def test_it_allows_mcp_results_to_alternate_between_json_and_text():
    results = run_verifiers("mcp", "Error: user not found", previous='{"a": 1}')

    assert all(result.passed for result in results)


def test_it_checks_android_indices_against_the_previous_screen():
    domain = get_domain("android")
    world = World(domain="android", title="Phone", initial_observation=XML)
    inside = domain.parse_action('{"action_type": "click", "index": 5}', world)
    outside = domain.parse_action('{"action_type": "click", "index": 4000}', world)

    assert _by_name(run_verifiers(domain, XML, action=inside, previous=XML))["ids_exist"].passed
    failed = _by_name(run_verifiers(domain, XML, action=outside, previous=XML))["ids_exist"]
    assert not failed.passed
    assert "'4000'" in failed.reason


def test_it_checks_android_element_list_numbers():
    screen = 'UI element 0: {"text": "Send"}\nUI element 1: {"text": "Back"}'
    domain = get_domain("android")
    world = World(domain="android", title="Phone", initial_observation=screen)
    action = domain.parse_action('{"action_type": "long_press", "index": 1}', world)

    results = _by_name(run_verifiers(domain, screen, action=action, previous=screen))

    assert results["ids_exist"].passed
    assert results["element_list"].passed
    skipped = _by_name(run_verifiers(domain, screen, action=action, previous="not a screen"))
    assert "ids_exist" not in skipped


def _mcp_world() -> World:
    return World(
        domain="mcp",
        title="Airline",
        extras={
            "tools": [
                {
                    "name": "calculate",
                    "description": "Evaluate arithmetic.",
                    "input_schema": {
                        "type": "object",
                        "properties": {"expression": {"type": "string"}},
                    },
                    "output_schema": {"type": "number"},
                },
                {"name": "think", "input_schema": {"type": "object"}},
            ]
        },
    )


def test_it_checks_a_result_against_the_tools_output_schema():
    world = _mcp_world()
    action = get_domain("mcp").parse_action(
        json.dumps({"name": "calculate", "arguments": {"expression": "152 + 103"}}), world
    )

    good = _by_name(run_verifiers("mcp", "255.0", action=action, world=world))["output_schema"]
    wrong = _by_name(run_verifiers("mcp", '"lots"', action=action, world=world))["output_schema"]
    not_json = _by_name(run_verifiers("mcp", "two hundred", action=action, world=world))[
        "output_schema"
    ]
    error = _by_name(run_verifiers("mcp", "Error: bad expression", action=action, world=world))

    assert good.passed
    assert not wrong.passed
    assert "is not of type 'number'" in wrong.reason
    assert not not_json.passed
    assert "not JSON" in not_json.reason
    assert error["output_schema"].passed


def test_it_skips_the_output_schema_when_the_tool_declares_none():
    world = _mcp_world()
    action = get_domain("mcp").parse_action('{"name": "think", "arguments": {}}', world)

    assert "output_schema" not in _by_name(run_verifiers("mcp", "", action=action, world=world))


def test_it_requires_a_final_prompt_once_the_terminal_shows_prompts():
    domain = get_domain("terminal")
    world = World(domain="terminal", title="Box", initial_observation="root@host:/app#")
    enter = domain.parse_action('[{"keystrokes": "pwd\\n", "duration": 0.1}]', world)
    typing = domain.parse_action('[{"keystrokes": "pw", "duration": 0.1}]', world)

    good = run_verifiers(domain, "root@host:/app# pwd\n/app\nroot@host:/app# ", action=enter)
    bad = _by_name(run_verifiers(domain, "/app", action=enter, previous="root@host:/app#"))
    half_typed = _by_name(run_verifiers(domain, "root@host:/app# pw", action=typing))

    assert _by_name(good)["terminal_prompt"].passed
    assert not bad["terminal_prompt"].passed
    assert "last line: '/app'" in bad["terminal_prompt"].reason
    assert "terminal_prompt" not in half_typed


def test_it_allows_empty_command_output_but_not_an_empty_page():
    assert all(r.passed for r in run_verifiers("terminal", ""))
    assert not _by_name(run_verifiers("android", ""))["length_sanity"].passed


def test_verifier_results_round_trip_through_dicts():
    result = VerifierResult(name="tags_closed", passed=False, reason="<div> is never closed")

    assert VerifierResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result


def test_importing_simulator_does_not_import_django():
    code = (
        "import sys, simulator, simulator.verifiers, simulator.observations, simulator.domains, "
        "simulator.cli.verify; assert 'django' not in sys.modules, 'django imported'"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )

    assert completed.returncode == 0, completed.stderr
