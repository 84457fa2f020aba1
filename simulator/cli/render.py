"""``python -m simulator render --domain D FILE [--format F]``: an observation's HTML document.

The document goes to stdout as UTF-8, ready to be saved and opened in a browser
(or served to a sandboxed iframe). Exit 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from simulator.domains import domain_names
from simulator.render import RENDERERS, render


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--domain", required=True, choices=domain_names())
    parser.add_argument("file", help="the observation, as a text file")
    parser.add_argument(
        "--format", dest="fmt", choices=sorted(RENDERERS), help="skip format detection"
    )
    parser.add_argument("--title", default="", help="the document's title")


def run(args: argparse.Namespace) -> int:
    try:
        # Undecodable bytes are replaced, not fatal: model output is shown as it came.
        observation = Path(args.file).read_bytes().decode("utf-8", errors="replace")
    except OSError as error:
        print(f"render: cannot read {args.file}: {error.strerror or error}", file=sys.stderr)
        return 2
    document = render(args.domain, observation, fmt=args.fmt, title=args.title)
    sys.stdout.buffer.write(document.encode("utf-8"))
    sys.stdout.flush()
    return 0
