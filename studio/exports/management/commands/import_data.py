"""``manage.py import_data PATH --project NAME``: read back any format the studio exports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from studio.exports.importing import ImportRejected
from studio.exports.services import import_data, project_for_cli

SHOWN = 50


class Command(BaseCommand):
    help = (
        "Import an awb, sft, trajectory or bundle file (or a dataset zip/folder); the format is "
        "detected, the project created if missing. A file with any bad line imports nothing."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path")
        parser.add_argument("--project", required=True, help="project slug or name")
        parser.add_argument("--collection", default="", help="name of the collection to create")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        if not path.exists():
            raise CommandError(f"{path}: no such file")
        project = project_for_cli(options["project"])
        try:
            result = import_data(project=project, path=path, collection_name=options["collection"])
        except ImportRejected as exc:
            for problem in exc.problems[:SHOWN]:
                self.stderr.write(f"{path}: {problem}")
            if len(exc.problems) > SHOWN:
                self.stderr.write(f"… and {len(exc.problems) - SHOWN} more")
            raise CommandError(f"nothing imported: {len(exc.problems)} problem(s)") from None
        self.stdout.write(
            f"Imported {result.format}: {result.episodes} episode(s), {result.steps} step(s), "
            f"{result.scenarios} scenario(s) into {project.slug} / {result.collection.name}"
        )
