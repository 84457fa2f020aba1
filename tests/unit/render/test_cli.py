from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from simulator.render import render
from tests.unit.render.parsed import parse

ROOT = Path(__file__).parents[3]
FIXTURES = ROOT / "tests" / "fixtures"


def _run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "simulator", "render", *args],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )


def test_it_writes_the_document_to_stdout():
    path = FIXTURES / "web" / "webarena_shopping_step1.axtree.txt"
    result = _run("--domain", "web", str(path))

    assert result.returncode == 0
    assert result.stdout.decode("utf-8") == render("web", path.read_text())


def test_it_honours_format_and_title(tmp_path):
    path = tmp_path / "obs.txt"
    path.write_bytes(b"<b>caf\xc3\xa9 \xff</b>")
    result = _run("--domain", "web", str(path), "--format", "text", "--title", "Step 1")

    parsed = parse(result.stdout.decode("utf-8"))
    assert parsed.find("pre")[0].text == "<b>caf\u00e9 \ufffd</b>"
    assert parsed.find("title")[0].text == "Step 1"


def test_it_exits_2_on_an_unknown_domain():
    result = _run("--domain", "fax", str(FIXTURES / "SOURCES.md"))

    assert result.returncode == 2
    assert b"invalid choice: 'fax'" in result.stderr
    assert result.stdout == b""


def test_it_exits_2_on_an_unreadable_file(tmp_path):
    missing = _run("--domain", "os", str(tmp_path / "missing.txt"))
    directory = _run("--domain", "os", str(tmp_path))

    assert (missing.returncode, directory.returncode) == (2, 2)
    assert b"cannot read" in missing.stderr and b"No such file" in missing.stderr
    assert b"cannot read" in directory.stderr
