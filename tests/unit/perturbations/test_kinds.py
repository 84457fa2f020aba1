from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from simulator.perturbations import PERTURBATION_KINDS, Perturbation, StepContext
from simulator.perturbations.shapes import observation_format, overlay

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
AXTREE = (FIXTURES / "web/webarena_shopping_step1.axtree.txt").read_text()
ARIA = (FIXTURES / "web/saucedemo_products.aria.yaml").read_text()
HTML = (FIXTURES / "web/duckduckgo_home.html").read_text()
UIAUTOMATOR = (FIXTURES / "android/uiautomator_youtube_home.xml").read_text()
TERMINAL = "root@host:/app# ls\na.txt\nb.txt\nroot@host:/app# "


def run(
    kind: str,
    mode: str,
    observation: str,
    *,
    domain: str = "mcp",
    action: str = "x",
    step: int = 1,
    **params,
):
    p = Perturbation.from_dict({"kind": kind, "mode": mode, "params": params})
    info = PERTURBATION_KINDS[kind]
    c = StepContext(step=step, action=action, domain=domain)
    if mode == "prompted":
        return info.instruction(p, c)
    assert info.enforce is not None
    return info.enforce(p, observation, c)


@pytest.mark.parametrize("kind", sorted(PERTURBATION_KINDS))
def test_every_kind_writes_a_prompted_instruction(kind):
    params: dict[str, Any] = {"text": "Say the disk is full."} if kind == "instruction" else {}
    text = run(kind, "prompted", "", **params)
    assert isinstance(text, str) and len(text) > 10


def test_error_injection_prompted_names_the_message():
    assert "quota exceeded" in run("error_injection", "prompted", "", message="quota exceeded")


def test_error_injection_enforced_mcp_is_a_json_error_object():
    done = run("error_injection", "enforced", '{"flights": []}', message="db down", code=503)
    assert json.loads(done.observation) == {"error": {"code": 503, "message": "db down"}}
    assert done.details["chars_before"] == len('{"flights": []}')


def test_error_injection_enforced_terminal_keeps_the_prompt_line():
    done = run(
        "error_injection",
        "enforced",
        TERMINAL,
        domain="terminal",
        action="ls",
        message="Permission denied",
    )
    assert done.observation == "root@host:/app# ls\nbash: ls: Permission denied\nroot@host:/app# "


def test_error_injection_enforced_terminal_without_prompt_and_json_keystrokes():
    action = json.dumps([{"keystrokes": "cat x\n", "duration": 0.1}])
    done = run(
        "error_injection",
        "enforced",
        "hello",
        domain="terminal",
        action=action,
        message="No such file",
    )
    assert done.observation == "bash: cat: No such file"


@pytest.mark.parametrize(
    ("observation", "domain", "check"),
    [
        (HTML, "web", lambda o: "<h1>500 Error</h1>" in o and o.startswith("<!DOCTYPE html>")),
        (AXTREE, "web", lambda o: o.startswith("RootWebArea '500 Error'")),
        (ARIA, "web", lambda o: o.startswith('- heading "500 Error"')),
        (
            UIAUTOMATOR,
            "android",
            lambda o: (
                ElementTree.fromstring(o.split("?>", 1)[1]).find(".//node[@text='Error']")
                is not None
            ),
        ),
        ("Home screen\n[1] Button 'Files'", "os", lambda o: "alert 'Error'" in o),
        (
            "UI element 0: Button Play",
            "android",
            lambda o: o.startswith('UI element 1: dialog "Error"'),
        ),
        ("plain results", "search", lambda o: o == "Error 500: Internal server error"),
    ],
)
def test_error_injection_enforced_is_domain_correct(observation, domain, check):
    done = run("error_injection", "enforced", observation, domain=domain)
    assert check(done.observation)


def test_rate_limit_both_modes():
    assert "Retry after 9 seconds" in run("rate_limit", "prompted", "", retry_after_s=9)
    done = run("rate_limit", "enforced", "{}", retry_after_s=9)
    assert json.loads(done.observation)["error"]["code"] == 429
    assert "Retry after 9 seconds" in done.observation


def test_hidden_answer_prompted_names_the_subject():
    assert "the CEO" in run("hidden_answer", "prompted", "", subject="the CEO")


def test_hidden_answer_enforced_drops_json_items_at_any_depth():
    observation = json.dumps(
        {"results": [{"title": "Paris facts"}, {"title": "Lyon facts"}], "total": 2}
    )
    done = run("hidden_answer", "enforced", observation, pattern="paris")
    assert json.loads(done.observation) == {"results": [{"title": "Lyon facts"}], "total": 2}
    assert done.details["dropped"] == 1 and done.changed


def test_hidden_answer_enforced_drops_text_lines_and_reports_no_change():
    done = run(
        "hidden_answer",
        "enforced",
        "a secret\nplain\nSECRET two",
        pattern="secret",
        domain="search",
    )
    assert done.observation == "plain"
    unchanged = run("hidden_answer", "enforced", '[{"a": 1}]', pattern="zzz")
    assert unchanged.observation == '[{"a": 1}]' and not unchanged.changed


def test_pagination_both_modes():
    assert "next_cursor" in run("pagination", "prompted", "", page_size=3)
    done = run("pagination", "enforced", json.dumps(list(range(8))), page_size=3, step=4)
    assert json.loads(done.observation) == {"items": [0, 1, 2], "next_cursor": "page-2-step-4"}
    assert done.details["held_back"] == 5


def test_pagination_enforced_pages_a_list_inside_an_object_and_keeps_indentation():
    observation = json.dumps({"flights": list(range(6)), "origin": "JFK"}, indent=2)
    done = run("pagination", "enforced", observation, page_size=2, cursor_key="cursor")
    assert json.loads(done.observation) == {
        "flights": [0, 1],
        "origin": "JFK",
        "cursor": "page-2-step-1",
    }
    assert "\n  " in done.observation


def test_pagination_enforced_text_and_short_inputs():
    done = run(
        "pagination",
        "enforced",
        "\n".join(f"line {i}" for i in range(7)),
        domain="search",
        page_size=5,
    )
    assert done.observation.endswith("-- 2 more (next_cursor: page-2-step-1) --")
    assert not run("pagination", "enforced", "[1]", page_size=5).changed
    assert not run("pagination", "enforced", '{"a": 1}', page_size=5).changed
    assert not run("pagination", "enforced", "one line", domain="search").changed


def test_truncation_both_modes():
    assert "40 characters" in run("truncation", "prompted", "", max_chars=40)
    done = run("truncation", "enforced", "x" * 100, max_chars=40)
    assert done.observation == "x" * 40 + "\n[... 60 characters truncated ...]"
    assert (done.details["chars_before"], done.details["chars_after"]) == (
        100,
        len(done.observation),
    )
    assert not run("truncation", "enforced", "short", max_chars=40).changed


def test_latency_records_a_simulated_delay_without_changing_the_observation():
    assert "1500 ms" in run("latency", "prompted", "", delay_ms=1500)
    done = run("latency", "enforced", "ok", delay_ms=1500)
    assert done.observation == "ok" and done.details == {"simulated_delay_ms": 1500}


def test_latency_beyond_the_timeout_becomes_a_timeout_error():
    done = run("latency", "enforced", "{}", delay_ms=5000, timeout_ms=1000)
    assert json.loads(done.observation)["error"]["code"] == 504
    assert done.details["simulated_delay_ms"] == 5000


def test_schema_drift_both_modes():
    text = run("schema_drift", "prompted", "", rename={"price": "cost"}, drop=["id"])
    assert "'price' is now called 'cost'" in text and "'id' is no longer returned" in text
    assert "newer API version" in run("schema_drift", "prompted", "")
    observation = json.dumps([{"id": 1, "price": 3, "meta": {"price": 4}}])
    done = run("schema_drift", "enforced", observation, rename={"price": "cost"}, drop=["id"])
    assert json.loads(done.observation) == [{"cost": 3, "meta": {"cost": 4}}]
    assert done.details["changes"] == 3
    assert not run("schema_drift", "enforced", "not json", rename={"a": "b"}).changed
    assert not run("schema_drift", "enforced", '{"x": 1}', rename={"a": "b"}).changed


def test_stale_data_both_modes():
    assert "2023-01-01" in run("stale_data", "prompted", "", as_of="2023-01-01")
    done = run("stale_data", "enforced", "price: 12 EUR, 12 EUR", replacements={"12 EUR": "9 EUR"})
    assert done.observation == "price: 9 EUR, 9 EUR" and done.details["replaced"] == 2
    assert not run("stale_data", "enforced", "x", replacements={"y": "z"}).changed


def test_distractor_prompted_styles():
    assert "untrusted" in run("distractor", "prompted", "", style="prompt_injection", content="X")
    assert "irrelevant" in run("distractor", "prompted", "", style="irrelevant", content="X")


@pytest.mark.parametrize(
    ("observation", "domain", "check"),
    [
        ('{"a": 1}', "mcp", lambda o: json.loads(o) == {"a": 1, "notice": "BUY NOW"}),
        ("[1]", "mcp", lambda o: json.loads(o) == [1, {"notice": "BUY NOW"}]),
        (HTML, "web", lambda o: '<div role="note"' in o and "BUY NOW" in o),
        (AXTREE, "web", lambda o: o.split("\n")[1] == "\tStaticText 'BUY NOW'"),
        (TERMINAL, "terminal", lambda o: o.endswith("b.txt\nBUY NOW\nroot@host:/app# ")),
        ("some text", "search", lambda o: o == "some text\nBUY NOW"),
    ],
)
def test_distractor_enforced_inserts_in_the_observation_format(observation, domain, check):
    done = run(
        "distractor", "enforced", observation, domain=domain, content="BUY NOW", style="irrelevant"
    )
    assert check(done.observation)
    assert done.details["chars_after"] > done.details["chars_before"] or domain == "mcp"


def test_ui_interrupt_prompted_describes_the_dialog():
    text = run("ui_interrupt", "prompted", "", style="cookie_banner")
    assert "cookie banner" in text and "Accept all" in text


def test_ui_interrupt_enforced_html_puts_a_dialog_first_in_body():
    done = run("ui_interrupt", "enforced", HTML, domain="web", style="cookie_banner")
    body = done.observation.index("<body")
    dialog = done.observation.index('<div role="dialog"')
    assert dialog > body and done.observation[done.observation.index(">", body) + 1 :].startswith(
        '<div role="dialog"'
    )
    assert "Accept all" in done.observation


def test_ui_interrupt_enforced_axtree_adds_dialog_lines_with_fresh_bids():
    done = run(
        "ui_interrupt",
        "enforced",
        AXTREE,
        domain="web",
        title="Allow?",
        text="Location",
        buttons=["No", "Yes"],
    )
    lines = done.observation.split("\n")
    assert lines[0] == AXTREE.split("\n")[0]
    assert lines[1].startswith("\t[") and "dialog 'Allow?'" in lines[1]
    bid = int(lines[1].split("]")[0].strip("\t["))
    assert bid > max(int(x) for x in __import__("re").findall(r"\[(\d+)\]", AXTREE))
    assert any("button 'Yes'" in line for line in lines[1:6])


def test_ui_interrupt_enforced_uiautomator_adds_a_parseable_node():
    done = run("ui_interrupt", "enforced", UIAUTOMATOR, domain="android", style="permission")
    root = ElementTree.fromstring(done.observation.split("?>", 1)[1])
    texts = [n.get("text") for n in root.iter("node")]
    assert "Allow access?" in texts and "Allow" in texts


@pytest.mark.parametrize(
    ("observation", "domain", "marker"),
    [
        (ARIA, "web", '- dialog "Subscribe to our newsletter"'),
        ("[1] Button 'Files'", "os", "alert 'Subscribe to our newsletter'"),
        ("UI element 0: Button Play", "android", 'dialog "Subscribe to our newsletter"'),
    ],
)
def test_ui_interrupt_enforced_text_trees(observation, domain, marker):
    done = run("ui_interrupt", "enforced", observation, domain=domain)
    assert marker in done.observation and done.observation.endswith(observation)


def test_ui_interrupt_enforced_leaves_non_gui_observations_alone():
    done = run("ui_interrupt", "enforced", '{"a": 1}')
    assert done.observation == '{"a": 1}' and not done.changed


def _overlaid(*args: Any) -> str:
    out = overlay(*args)
    assert out is not None
    return out


def test_overlay_edge_cases():
    assert _overlaid("html", "<p>no body</p>", "T", "x", []).startswith('<div role="dialog"')
    assert _overlaid("uiautomator-xml", "<node/>", "T", "x", ["OK"]).startswith("<node/>\n<node")
    assert _overlaid("axtree", "RootWebArea 'x'", "T", "x", []).startswith(
        "RootWebArea 'x'\n\t[1] dialog"
    )


@pytest.mark.parametrize(
    ("text", "domain", "fmt"),
    [
        ('{"a": 1}', "mcp", "json"),
        (UIAUTOMATOR, "android", "uiautomator-xml"),
        ("UI element 0: button", "android", "android-elements"),
        (HTML, "web", "html"),
        (AXTREE, "web", "axtree"),
        (ARIA, "web", "aria-yaml"),
        ("x", "web", "html"),
        ("x", "android", "uiautomator-xml"),
        ("x", "os", "os-a11y"),
        ("x", "swe", "terminal"),
        ("Error: user not found", "mcp", "json"),
        ("x", "search", "text"),
        ('{"a": 1}', "a-domain-not-registered", "json"),
        ("x", "a-domain-not-registered", "text"),
    ],
)
def test_an_enforced_change_is_written_in_the_format_the_domain_judges(text, domain, fmt):
    """Among the domain's own formats; a text in none of them gets the domain's first."""
    assert observation_format(text, domain) == fmt


def test_instruction_passes_text_through():
    assert (
        run("instruction", "prompted", "", text="The printer is on fire.")
        == "The printer is on fire."
    )
