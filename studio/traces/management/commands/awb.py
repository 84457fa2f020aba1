"""``manage.py awb import|infer|judge|score|export``: AgentWorldBench in and out of the studio.

``infer``, ``judge`` and ``score`` take every flag of Qwen-AgentWorld's ``eval.py``
with the same meaning and defaults, and write the same files
(``<output-dir>/predictions.jsonl``, ``<output-dir>/judged.jsonl``) and the same
report on stdout, so ``python eval.py`` can be swapped for
``python manage.py awb``. The studio's extras: ``--concurrency``, ``--resume``,
``--project`` (store the results for review), the studio's configured model when
no base URL is given, ``--official-prompts`` for the judge, and the older
``--input/--output/--endpoint/--model`` spellings. The logic lives in
:mod:`simulator.review.awb_eval` and :mod:`simulator.review.judge`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulator.backends import create_backend
from simulator.backends.base import Backend
from simulator.chat_client import ChatClient
from simulator.errors import FormatError
from simulator.formats.awb import load_data, read_rows
from simulator.official_prompts import OfficialPrompts, PromptFileError
from simulator.review.awb_eval import (
    DEFAULT_SAMPLING,
    RunSummary,
    aggregate,
    format_report,
    infer_row,
    run_rows,
)
from simulator.review.judge import JudgePrompts, domain_of, judge_row
from simulator.types import Sampling
from studio.core.endpoints import default_endpoint_spec
from studio.errors import StudioError
from studio.exports.importing import ImportRejected, import_path, project_for_cli
from studio.exports.writing import write_project_awb
from studio.traces import services

#: The environment variable that sets ``awb judge --official-prompts``.
PROMPTS_ENV = "STUDIO_AGENTWORLD_PROMPTS"


def _spec(url: str | None, model: str | None, key: str | None) -> dict[str, Any]:
    """An OpenAI-compatible endpoint at ``url``, else the studio's configured model."""
    if url:
        return {"kind": "openai", "base_url": url, "model": model or "default", "api_key": key}
    spec = default_endpoint_spec()
    if model and spec["kind"] == "openai":
        spec["model"] = model
    return spec


def _client(spec: dict[str, Any]) -> Backend | ChatClient:
    """eval.py's plain chat calls for an OpenAI-compatible endpoint; the backend otherwise."""
    if spec["kind"] == "openai":
        return ChatClient(spec["base_url"], spec["model"], spec.get("api_key"))
    return create_backend(spec)


def _output(options: dict[str, Any], name: str) -> Path:
    """``--output FILE`` if given, else ``<--output-dir>/<name>`` as eval.py writes it."""
    return Path(options["output"]) if options["output"] else Path(options["output_dir"]) / name


def _shared(p: argparse.ArgumentParser, store: str) -> None:
    p.add_argument("--max-tokens", type=int, default=DEFAULT_SAMPLING.max_tokens)
    p.add_argument("--temperature", type=float, default=DEFAULT_SAMPLING.temperature)
    p.add_argument("--output-dir", default="./results", help="Output directory")
    p.add_argument("--output", help="write this file instead of the one in --output-dir")
    p.add_argument("--concurrency", type=int, default=8, help="rows in flight at once")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the rows the output file already holds for the same input, send the rest",
    )
    p.add_argument("--project", help=f"also store the {store} in this studio project")


class Command(BaseCommand):
    help = "AgentWorldBench: import, infer, judge, score, export (eval.py-compatible files)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        p = sub.add_parser(
            "import",
            help="import a file into a project as import_data does (AWB rows become traces)",
        )
        p.add_argument("file")
        p.add_argument("--project", required=True)
        p.add_argument(
            "--valid-only",
            action="store_true",
            help="import the valid rows of an AWB file with bad lines",
        )
        p = sub.add_parser("infer", help="Run world model inference")
        source = p.add_mutually_exclusive_group(required=True)
        source.add_argument(
            "--data-dir", help="Path to AgentWorldBench data (its *_test.jsonl files)"
        )
        source.add_argument("--input", help="one JSONL file of rows instead")
        p.add_argument(
            "--model-base-url",
            "--endpoint",
            dest="model_base_url",
            help="OpenAI-compatible API base URL, with or without /v1 (default: the studio's model)",
        )
        p.add_argument("--model-name", "--model", dest="model_name", help="Model name / ID")
        p.add_argument(
            "--model-api-key",
            "--api-key",
            dest="model_api_key",
            default="EMPTY",
            help="API key (default: EMPTY)",
        )
        _shared(p, "generations")
        p = sub.add_parser("judge", help="Run LLM judge scoring")
        p.add_argument(
            "--predictions",
            "--input",
            dest="predictions",
            required=True,
            help="Path to predictions JSONL",
        )
        p.add_argument(
            "--judge-base-url",
            "--judge-endpoint",
            dest="judge_base_url",
            help="Judge API base URL, with or without /v1 (default: the studio's model)",
        )
        p.add_argument("--judge-model", help="Judge model name")
        p.add_argument(
            "--judge-api-key", default=None, help="Judge API key (default: OPENAI_API_KEY env)"
        )
        p.add_argument("--max-retries", type=int, default=3)
        p.add_argument(
            "--official-prompts",
            default=os.environ.get(PROMPTS_ENV) or None,
            metavar="DIR",
            help="the prompts/ folder of a Qwen-AgentWorld checkout: judge with its "
            f"<domain>/judge_system_prompt.txt files (default: ${PROMPTS_ENV})",
        )
        _shared(p, "scores")
        p = sub.add_parser("score", help="Aggregate scores from judged results")
        p.add_argument(
            "--predictions",
            "--input",
            dest="predictions",
            required=True,
            help="Path to judged JSONL",
        )
        p = sub.add_parser("export", help="a project's traces as AWB JSONL")
        p.add_argument("--project", required=True)
        p.add_argument("--out", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"do_{options['action']}")(options)

    def do_import(self, options: dict[str, Any]) -> None:
        path = Path(options["file"])
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        project = project_for_cli(options["project"])
        try:
            result = import_path(project=project, path=path, partial=options["valid_only"])
        except ImportRejected as exc:
            self._problems(path, exc.errors)
            raise CommandError(f"nothing was imported: {len(exc.errors)} problem(s)") from None
        except StudioError as exc:
            raise CommandError(str(exc)) from exc
        self._problems(path, result.skipped)
        self.stdout.write(f"{result.summary()} into {project.slug} / {result.collection.name}")

    def _problems(self, path: Path, errors: Sequence[FormatError]) -> None:
        for error in errors:
            line = f"{error.line}:" if error.line is not None else ""
            field = f" {error.field}:" if error.field else ""
            self.stderr.write(f"{path}:{line}{field} {error.reason}")

    def _sampling(self, options: dict[str, Any]) -> Sampling:
        return replace(
            DEFAULT_SAMPLING, max_tokens=options["max_tokens"], temperature=options["temperature"]
        )

    def _run(
        self,
        rows: list[dict[str, Any]],
        spec: dict[str, Any],
        options: dict[str, Any],
        *,
        work: Callable[[Backend | ChatClient, Mapping[str, Any]], Awaitable[dict[str, Any]]],
        label: str,
        output: Path,
    ) -> RunSummary:
        """Run ``work(client, row)`` over ``rows`` into ``output`` with the run options."""

        async def run() -> RunSummary:
            client = _client(spec)
            try:
                return await run_rows(
                    rows,
                    lambda row: work(client, row),
                    output=output,
                    concurrency=options["concurrency"],
                    label=label,
                    resume=options["resume"],
                )
            finally:
                await client.aclose()

        summary = asyncio.run(run())
        # Status goes to stderr: stdout carries only what eval.py prints.
        self.stderr.write(
            f"{summary.done} row(s) {label}, {summary.skipped} already done, "
            f"in {summary.seconds:.1f} s: {output}"
        )
        return summary

    def do_infer(self, options: dict[str, Any]) -> None:
        rows = (
            load_data(options["data_dir"]) if options["data_dir"] else read_rows(options["input"])
        )
        spec = _spec(options["model_base_url"], options["model_name"], options["model_api_key"])
        sampling = self._sampling(options)
        summary = self._run(
            rows,
            spec,
            options,
            work=lambda client, row: infer_row(client, row, sampling),
            label="inferred",
            output=_output(options, "predictions.jsonl"),
        )
        if options["project"]:
            stored = services.awb_store_predictions(
                project=project_for_cli(options["project"]),
                rows=summary.rows,
                label=str(spec.get("base_url", spec["kind"])),
            )
            self.stderr.write(f"{stored} generation(s) stored in the studio")

    def _judge_prompts(
        self, options: dict[str, Any], rows: list[dict[str, Any]]
    ) -> JudgePrompts | None:
        """The official prompt files' texts, each domain's checked before any call; or None."""
        if not options["official_prompts"]:
            return None
        try:
            official = OfficialPrompts(options["official_prompts"])
            for domain in sorted({domain_of(str(r.get("task", "mcp"))) for r in rows}):
                official.judge_system_prompt(domain)
            return official.judge_prompts()
        except PromptFileError as exc:
            raise CommandError(f"--official-prompts: {exc}") from exc

    def do_judge(self, options: dict[str, Any]) -> None:
        rows = read_rows(options["predictions"])
        prompts = self._judge_prompts(options, rows)
        # eval.py's rule: the flag, else OPENAI_API_KEY, else "EMPTY".
        key = options["judge_api_key"] or os.environ.get("OPENAI_API_KEY", "EMPTY")
        spec = _spec(options["judge_base_url"], options["judge_model"], key)
        sampling = self._sampling(options)
        summary = self._run(
            rows,
            spec,
            options,
            work=lambda client, row: judge_row(
                client,
                row,
                prompts=prompts,
                max_retries=options["max_retries"],
                sampling=sampling,
            ),
            label="judged",
            output=_output(options, "judged.jsonl"),
        )
        self.stdout.write(format_report(aggregate(summary.rows)), ending="")
        if options["project"]:
            stored = services.awb_store_judged(
                project=project_for_cli(options["project"]),
                rows=summary.rows,
                label=str(spec.get("base_url", spec["kind"])),
            )
            self.stderr.write(f"{stored} judge score(s) stored in the studio")

    def do_score(self, options: dict[str, Any]) -> None:
        self.stdout.write(format_report(aggregate(read_rows(options["predictions"]))), ending="")

    def do_export(self, options: dict[str, Any]) -> None:
        project = project_for_cli(options["project"])
        count = write_project_awb(project=project, target=Path(options["out"]))
        self.stdout.write(f"{count} row(s) written to {options['out']}")
