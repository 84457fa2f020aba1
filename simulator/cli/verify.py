"""``python -m simulator verify --domain D FILE``: check one observation file.

Prints the detected format on stdout; exits 0 when the file passes the domain's
format verifiers, else 1 with one ``FAIL <verifier>: <reason>`` line per failure
on stderr (2 for an unreadable file or an unknown domain, as argparse does).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from simulator.domains import domain_names, get_domain
from simulator.verifiers import verify_format


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--domain", required=True, choices=domain_names())
    parser.add_argument("file", type=Path, help="a file holding one observation")


def run(args: argparse.Namespace) -> int:
    domain = get_domain(args.domain)
    try:
        observation = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        print(f"cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    print(domain.detect_format(observation) or "unknown")
    failures = [result for result in verify_format(domain, observation) if not result.passed]
    for result in failures:
        print(f"FAIL {result.name}: {result.reason}", file=sys.stderr)
    return 1 if failures else 0
