"""``python -m simulator COMMAND``: a stable command line others script against."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each command lives in its own module with ``add_arguments(parser)`` and ``run(args) -> int``.
COMMANDS = {
    "verify": ("simulator.cli.verify", "check an observation file with a domain's verifiers"),
    "awb-check": ("simulator.cli.awb_check", "validate an AgentWorldBench JSONL file"),
    "render": ("simulator.cli.render", "write the HTML document for an observation"),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulator")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(module_name)
        sub = commands.add_parser(name, help=help_text)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    args = parser.parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
