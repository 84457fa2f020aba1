"""Every real observation in tests/fixtures is recognised and passes its domain's format
verifiers; a deliberately broken copy of each fails with a reason that says why."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from simulator.domains import get_domain
from simulator.verifiers import verify_format
from tests.unit.verifiers._fixtures import (
    FIXTURES,
    OBSERVATION_FILES,
    read,
    tau_bench_tool_results,
    terminal_triples,
)

REPO = Path(__file__).resolve().parents[3]


def _failures(domain: str, observation: str) -> dict[str, str]:
    return {r.name: r.reason for r in verify_format(domain, observation) if not r.passed}


def _cli(domain: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "simulator", "verify", "--domain", domain, str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(("domain", "relative", "expected"), OBSERVATION_FILES)
def test_it_recognises_and_passes_each_observation_file(domain, relative, expected):
    observation = read(relative)

    assert get_domain(domain).detect_format(observation) == expected
    results = verify_format(domain, observation)
    assert results
    assert all(r.passed for r in results), [r for r in results if not r.passed]


def test_it_recognises_terminal_triples_stdout_as_terminal_text():
    for name, triple in terminal_triples():
        domain = triple["domain"]
        for observation in (
            triple["truth"]["stdout"],
            *(h["observation"] for h in triple["history"]),
        ):
            assert get_domain(domain).detect_format(observation) == "terminal", name
            assert not _failures(domain, observation), name


def test_it_recognises_tau_bench_tool_results_as_json_or_text():
    results = tau_bench_tool_results()
    formats = {get_domain("mcp").detect_format(result) for result in results}

    assert formats == {"json", "text"}
    for result in results:
        assert not _failures("mcp", result), result[:80]


def _broken_copies() -> list[tuple[str, str, str, str]]:
    """(domain, broken observation, failing verifier, words the reason must contain)."""
    step1 = read("web/webarena_shopping_step1.axtree.txt")
    html = read("web/duckduckgo_home.html")
    xml = read("android/uiautomator_youtube_home.xml")
    aria = read("web/saucedemo_products.aria.yaml")
    return [
        ("web", re.sub(r"\[\d+\] ", "", step1), "axtree_lines", "no line carries a [bid]"),
        ("web", step1 + "\n\t<<garbage>>", "axtree_lines", "is not a `[bid] role 'name'` node"),
        ("web", html.replace("</form>", ""), "tags_closed", "<form> opened at line"),
        ("web", html[: len(html) // 2], "tags_closed", "is never closed"),
        ("web", html.replace("</head>", "</head></span>"), "tags_closed", "stray </span>"),
        ("web", aria + "\n  orphan continuation", "aria_items", "neither an item"),
        ("web", "Just some prose.", "keeps_representation", "none of web's formats"),
        ("web", "   ", "length_sanity", "empty"),
        ("android", xml[: len(xml) // 2], "tags_closed", "XML does not parse"),
        ("android", xml.replace("hierarchy", "screen"), "keeps_representation", "none of"),
        ("mcp", '{"reservation_id": "HATHAT", ', "json_valid", "does not parse"),
        ("mcp", '```json\n{"a": 1}\n```', "json_valid", "Markdown code fence"),
        (
            "terminal",
            "root@host:/app# pwd\n/app",
            "terminal_prompt",
            "does not end with a shell prompt",
        ),
        ("terminal", "x" * 400_001, "length_sanity", "over the limit"),
    ]


@pytest.mark.parametrize(("domain", "observation", "verifier", "words"), _broken_copies())
def test_it_fails_a_broken_copy_with_a_clear_reason(domain, observation, verifier, words):
    failures = _failures(domain, observation)

    assert verifier in failures
    assert words in failures[verifier]


@pytest.mark.parametrize(("domain", "relative", "expected"), OBSERVATION_FILES)
def test_the_cli_passes_each_observation_file(domain, relative, expected):
    completed = _cli(domain, Path("tests/fixtures") / relative)

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == expected
    assert "FAIL" not in completed.stderr


def test_the_cli_passes_terminal_and_mcp_observations(tmp_path):
    stdout = tmp_path / "stdout.txt"
    stdout.write_text(terminal_triples()[0][1]["truth"]["stdout"] or "done\n")
    result = tmp_path / "result.json"
    result.write_text(tau_bench_tool_results()[0])

    assert _cli("terminal", stdout).returncode == 0
    completed = _cli("mcp", result)
    assert completed.returncode == 0
    assert completed.stdout.strip() == "json"


@pytest.mark.parametrize(
    ("domain", "name", "broken", "expected"),
    [
        ("web", "truncated.html", read("web/duckduckgo_home.html")[:3000], "FAIL tags_closed: "),
        (
            "web",
            "nobids.axtree.txt",
            re.sub(r"\[\d+\] ", "", read("web/webarena_shopping_step2.axtree.txt")),
            "FAIL axtree_lines: no line carries a [bid]",
        ),
        (
            "android",
            "truncated.xml",
            read("android/uiautomator_youtube_home.xml")[:5000],
            "FAIL tags_closed: XML does not parse",
        ),
    ],
)
def test_the_cli_fails_a_broken_copy_and_says_why(tmp_path, domain, name, broken, expected):
    path = tmp_path / name
    path.write_text(broken)

    completed = _cli(domain, path)

    assert completed.returncode == 1
    assert expected in completed.stderr


def test_the_cli_reports_an_unreadable_file(tmp_path):
    completed = _cli("web", tmp_path / "missing.html")

    assert completed.returncode == 2
    assert "cannot read" in completed.stderr


def _run_in_process(argv: list[str]) -> int:
    import argparse

    from simulator.cli import verify

    parser = argparse.ArgumentParser()
    verify.add_arguments(parser)
    return verify.run(parser.parse_args(argv))


def test_the_verify_command_runs_in_process(tmp_path, capsys):
    broken = tmp_path / "broken.xml"
    broken.write_text(read("android/uiautomator_youtube_home.xml")[:4000])

    passed_code = _run_in_process(
        ["--domain", "web", str(FIXTURES / "web/saucedemo_products.aria.yaml")]
    )
    passed_out = capsys.readouterr()
    failed_code = _run_in_process(["--domain", "android", str(broken)])
    failed_out = capsys.readouterr()
    missing_code = _run_in_process(["--domain", "os", str(tmp_path / "none.txt")])

    assert (passed_code, passed_out.out, passed_out.err) == (0, "aria-yaml\n", "")
    assert failed_code == 1
    assert failed_out.out == "uiautomator-xml\n"
    assert failed_out.err.startswith("FAIL tags_closed: XML does not parse")
    assert missing_code == 2
