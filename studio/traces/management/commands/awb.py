"""``manage.py awb import|infer|judge|score|export``: AgentWorldBench in and out of the studio.

infer/judge/score write and read exactly what Qwen-AgentWorld's ``eval.py``
does; the logic lives in :mod:`simulator.awb_eval` and :mod:`simulator.judge`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulator.awb_eval import (
    DEFAULT_SAMPLING,
    ChatClient,
    aggregate,
    format_report,
    infer_row,
    read_rows,
    run_rows,
)
from simulator.backends import create_backend
from simulator.judge import judge_row
from studio.core.endpoints import default_endpoint_spec
from studio.traces import services


def _spec(url: str | None, model: str | None, key: str | None) -> dict[str, Any]:
    if url:
        # eval.py takes ".../v1"; the backend adds /v1/chat/completions itself.
        url = url.rstrip("/").removesuffix("/v1")
        return {
            "kind": "openai",
            "base_url": url,
            "model": model or "default",
            "api_key": key or None,
        }
    return default_endpoint_spec()


class Command(BaseCommand):
    help = "AgentWorldBench: import, infer, judge, score, export (eval.py-compatible files)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        p = sub.add_parser("import", help="import an AWB or trajectory JSONL file into a project")
        p.add_argument("file")
        p.add_argument("--project", required=True)
        p.add_argument(
            "--valid-only",
            action="store_true",
            help="import the valid lines of a file with bad ones",
        )
        p = sub.add_parser("infer", help="add the world model's generation (gen) to each row")
        p.add_argument("--input", required=True)
        p.add_argument("--output", required=True)
        p.add_argument(
            "--endpoint", help="OpenAI-compatible base URL (default: the studio's model)"
        )
        p.add_argument("--model")
        p.add_argument("--api-key", default=os.environ.get("STUDIO_MODEL_API_KEY"))
        p.add_argument("--concurrency", type=int, default=8)
        p.add_argument("--max-tokens", type=int, default=DEFAULT_SAMPLING.max_tokens)
        p.add_argument("--temperature", type=float, default=DEFAULT_SAMPLING.temperature)
        p.add_argument(
            "--project", help="also store the generations as simulations in this project"
        )
        p = sub.add_parser("judge", help="score each row's gen against the real observation")
        p.add_argument("--input", required=True)
        p.add_argument("--output", required=True)
        p.add_argument("--judge-endpoint")
        p.add_argument("--judge-model")
        p.add_argument("--judge-api-key", default=os.environ.get("OPENAI_API_KEY"))
        p.add_argument("--concurrency", type=int, default=8)
        p.add_argument("--max-retries", type=int, default=3)
        p.add_argument("--max-tokens", type=int, default=DEFAULT_SAMPLING.max_tokens)
        p.add_argument("--temperature", type=float, default=DEFAULT_SAMPLING.temperature)
        p.add_argument("--project", help="also store the scores as judge scores in this project")
        p = sub.add_parser("score", help="per-domain and overall scores of a judged file")
        p.add_argument("--input", required=True)
        p = sub.add_parser("export", help="a project's traces as AWB JSONL")
        p.add_argument("--project", required=True)
        p.add_argument("--out", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"do_{options['action']}")(options)

    def do_import(self, options: dict[str, Any]) -> None:
        path = Path(options["file"])
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        project = services.project_for_cli(options["project"])
        try:
            job = services.import_file(project=project, path=path, partial=options["valid_only"])
        except services.ImportTooLarge as exc:
            raise CommandError(str(exc)) from exc
        for error in job.errors:
            field = f" {error['field']}:" if error["field"] else ""
            self.stderr.write(f"{path}:{error['line']}:{field} {error['reason']}")
        if job.status != "done":
            raise CommandError(job.message)
        self.stdout.write(job.message)

    def _sampling(self, options: dict[str, Any]) -> Any:
        from dataclasses import replace

        return replace(
            DEFAULT_SAMPLING, max_tokens=options["max_tokens"], temperature=options["temperature"]
        )

    def do_infer(self, options: dict[str, Any]) -> None:
        rows = read_rows(options["input"])
        spec = _spec(options["endpoint"], options["model"], options["api_key"])
        sampling = self._sampling(options)

        async def run() -> Any:
            # An OpenAI-compatible endpoint gets eval.py's plain (non-streaming) calls.
            backend: Any = (
                ChatClient(spec["base_url"], spec["model"], spec.get("api_key"))
                if spec["kind"] == "openai"
                else create_backend(spec)
            )
            try:
                return await run_rows(
                    rows,
                    lambda row: infer_row(backend, row, sampling),
                    output=options["output"],
                    concurrency=options["concurrency"],
                    label="infer",
                )
            finally:
                await backend.aclose()

        summary = asyncio.run(run())
        self.stdout.write(
            f"{summary.done} row(s) inferred, {summary.skipped} already done, in {summary.seconds:.1f} s"
        )
        if options["project"]:
            stored = services.awb_store_predictions(
                project=services.project_for_cli(options["project"]),
                rows=summary.rows,
                label=str(spec.get("base_url", spec["kind"])),
            )
            self.stdout.write(f"{stored} generation(s) stored in the studio")

    def do_judge(self, options: dict[str, Any]) -> None:
        rows = read_rows(options["input"])
        spec = _spec(options["judge_endpoint"], options["judge_model"], options["judge_api_key"])
        sampling = self._sampling(options)

        async def run() -> Any:
            backend = create_backend(spec)
            try:
                return await run_rows(
                    rows,
                    lambda row: judge_row(
                        backend, row, max_retries=options["max_retries"], sampling=sampling
                    ),
                    output=options["output"],
                    concurrency=options["concurrency"],
                    label="judge",
                )
            finally:
                await backend.aclose()

        summary = asyncio.run(run())
        sys.stdout.write(format_report(aggregate(summary.rows)))
        if options["project"]:
            stored = services.awb_store_judged(
                project=services.project_for_cli(options["project"]),
                rows=summary.rows,
                label=str(spec.get("base_url", spec["kind"])),
            )
            self.stdout.write(f"{stored} judge score(s) stored in the studio")

    def do_score(self, options: dict[str, Any]) -> None:
        self.stdout.write(format_report(aggregate(read_rows(options["input"]))), ending="")

    def do_export(self, options: dict[str, Any]) -> None:
        project = services.project_for_cli(options["project"])
        count = services.awb_export(project=project, target=Path(options["out"]))
        self.stdout.write(f"{count} row(s) written to {options['out']}")
