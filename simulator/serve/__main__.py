"""``python -m simulator.serve --port P [...]``: the protocol test server on the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import uvicorn

from simulator.backends.replay import ReplayBackend
from simulator.serve.app import ChatServer, ServerOptions


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m simulator.serve",
        description="An OpenAI-compatible test server (SGLang's streaming protocol) with faults.",
    )
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--replay",
        metavar="FILE.jsonl",
        help='answer turn k with observation k of a JSONL file ({"observation": ...} lines or AgentWorldBench rows)',
    )
    parser.add_argument("--latency-ms", type=float, default=0.0, help="wait before the first token")
    parser.add_argument("--tokens-per-s", type=float, default=None, help="pace the tokens")
    parser.add_argument("--reasoning", action="store_true", help="stream reasoning_content first")
    parser.add_argument("--fail-rate", type=float, default=0.0, help="answer HTTP 500 at this rate")
    parser.add_argument("--seed", type=int, default=None, help="seed of --fail-rate")
    return parser.parse_args(argv)


def options_from_args(args: argparse.Namespace) -> ServerOptions:
    replay = None
    if args.replay:
        replay = ReplayBackend.from_jsonl(args.replay).recorded_observations()
    return ServerOptions(
        replay=replay,
        latency_ms=args.latency_ms,
        tokens_per_s=args.tokens_per_s,
        reasoning=args.reasoning,
        fail_rate=args.fail_rate,
        seed=args.seed,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    app = ChatServer(options_from_args(args))
    uvicorn.run(app, host=args.host, port=args.port, lifespan="off", access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
