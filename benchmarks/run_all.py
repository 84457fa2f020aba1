"""``make bench``: every benchmarks/*.py script, one after the other, with --quick where
the script has it. Scripts are discovered by glob, so a new benchmark needs no change here;
``plot_*.py`` scripts draw another script's output and ``_*.py`` modules are shared code:
neither is run.

    .venv/bin/python benchmarks/run_all.py            # quick runs
    .venv/bin/python benchmarks/run_all.py --full     # default (longer) runs
    .venv/bin/python benchmarks/run_all.py load_ws    # only scripts whose name matches
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts(patterns: list[str]) -> list[Path]:
    found = sorted(
        p
        for p in HERE.glob("*.py")
        if p.name != "run_all.py" and not p.name.startswith(("plot_", "_"))
    )
    return [p for p in found if not patterns or any(pat in p.stem for pat in patterns)]


def main() -> int:
    parser = argparse.ArgumentParser(description="Run every benchmark in benchmarks/.")
    parser.add_argument("--full", action="store_true", help="run without --quick")
    parser.add_argument("only", nargs="*", help="run only scripts whose name contains this")
    args = parser.parse_args()
    failed: list[str] = []
    for script in scripts(args.only):
        command = [sys.executable, str(script)]
        if not args.full and "--quick" in script.read_text():
            command.append("--quick")
        print(f"=== {script.name} {' '.join(command[2:])}".rstrip(), flush=True)
        started = time.monotonic()
        result = subprocess.run(command, cwd=HERE.parent, check=False)
        print(f"=== {script.name}: exit {result.returncode} in {time.monotonic() - started:.0f} s\n",
              flush=True)  # fmt: skip
        if result.returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
