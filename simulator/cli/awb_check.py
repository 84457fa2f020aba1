"""``python -m simulator awb-check FILE``: validate an AgentWorldBench JSONL file.

Every problem is printed on stderr as ``line N: field: reason``; a summary (rows,
trajectories, domains) goes to stdout. The exit status is 0 only when every
line is valid, so the command can gate an export in a script.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from simulator.errors import FormatError
from simulator.formats.awb import AwbRow, iter_awb


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="AgentWorldBench JSONL file")


def run(args: argparse.Namespace) -> int:
    rows: list[AwbRow] = []
    bad_lines: set[int | None] = set()
    try:
        for item in iter_awb(args.file):
            if isinstance(item, FormatError):
                bad_lines.add(item.line)
                print(str(item), file=sys.stderr)
            else:
                rows.append(item)
    except OSError as exc:
        print(f"{args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(f"{args.file}: not UTF-8 text ({exc.reason})", file=sys.stderr)
        return 1
    trajectories = {row.trajectory_key for row in rows}
    domains = Counter(row.domain for row in rows)
    listed = ", ".join(f"{name} {count}" for name, count in sorted(domains.items())) or "none"
    print(f"rows: {len(rows)} valid, {len(bad_lines)} invalid")
    print(f"trajectories: {len(trajectories)}")
    print(f"domains: {listed}")
    return 1 if bad_lines else 0
