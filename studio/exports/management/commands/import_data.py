"""``manage.py import_data PATH --project NAME``: read back any format the studio exports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from studio.errors import StudioError
from studio.exports.importing import ImportRejected, import_path, project_for_cli

SHOWN = 50


class Command(BaseCommand):
    help = (
        "Import an awb, sft, trajectory or bundle file (or a dataset zip/folder); the format is "
        "detected, the project created if missing (owned by a local account). AWB rows become "
        "traces, as awb import makes them. A file with any bad line imports nothing."
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
            result = import_path(project=project, path=path, collection_name=options["collection"])
        except ImportRejected as exc:
            for problem in exc.problems[:SHOWN]:
                self.stderr.write(f"{path}: {problem}")
            if len(exc.problems) > SHOWN:
                self.stderr.write(f"… and {len(exc.problems) - SHOWN} more")
            raise CommandError(f"nothing imported: {len(exc.problems)} problem(s)") from None
        except StudioError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{result.summary()} into {project.slug} / {result.collection.name}")
