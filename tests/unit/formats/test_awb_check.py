from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from simulator.__main__ import main

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures/agentworldbench/synthetic_terminal.jsonl"


def test_a_valid_file_passes_with_a_summary(capsys):
    assert main(["awb-check", str(FIXTURE)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "rows: 3 valid, 0 invalid",
        "trajectories: 1",
        "domains: terminal 3",
    ]
    assert err == ""


def test_every_problem_is_listed_and_the_exit_status_fails(tmp_path, capsys):
    rows = FIXTURE.read_text().splitlines()
    bad = json.loads(rows[1])
    del bad["system_str"]
    bad["turn_idx"] = 9
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([rows[0], "{broken", json.dumps(bad), rows[2]]) + "\n")
    assert main(["awb-check", str(path)]) == 1
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert lines[0].startswith("line 2: invalid JSON")
    assert "line 3: system_str: missing" in lines
    assert "rows: 2 valid, 2 invalid" in out


def test_missing_and_binary_files(tmp_path, capsys):
    assert main(["awb-check", str(tmp_path / "nope.jsonl")]) == 2
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    assert main(["awb-check", str(binary)]) == 1
    assert "not UTF-8" in capsys.readouterr().err


def test_it_runs_as_a_module():
    done = subprocess.run(
        [sys.executable, "-m", "simulator", "awb-check", str(FIXTURE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "trajectories: 1" in done.stdout
