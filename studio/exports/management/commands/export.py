"""``manage.py export``: write a collection in a training/evaluation format (stable CLI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from studio.core.models import Project
from studio.exports.models import Collection, ExportLayout
from studio.exports.services import export_to_path, manifest_path
from studio.exports.writing import FORMATS


class Command(BaseCommand):
    help = "Export a collection as awb, sft, trajectory or bundle JSONL (or a dataset layout)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--project", required=True, help="project slug or name")
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--out", required=True, help="output file (or .zip / folder with --hf)")
        parser.add_argument("--hf", action="store_true", help="Hugging Face dataset layout")
        parser.add_argument("--parquet", action="store_true", help="add Parquet (with --hf)")
        parser.add_argument(
            "--reasoning", action="store_true", help="sft: keep the world model's reasoning"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["project"]
        project = (
            Project.objects.filter(slug=name).first() or Project.objects.filter(name=name).first()
        )
        if project is None:
            raise CommandError(f"no project {name!r}")
        collection = Collection.objects.filter(project=project, name=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection {options['collection']!r} in {project.slug}")
        out = Path(options["out"])
        data = export_to_path(
            collection=collection,
            format=options["format"],
            out=out,
            layout=ExportLayout.HF if options["hf"] else ExportLayout.FILE,
            include_reasoning=options["reasoning"],
            parquet=options["parquet"],
        )
        counts = data["counts"]
        self.stdout.write(
            f"Wrote {counts['records']} {options['format']} record(s) "
            f"({counts['episodes']} episodes, {counts['traces']} traces, "
            f"{counts['scenarios']} scenarios, {counts['skipped']} skipped) to {out}; "
            f"manifest {manifest_path(out)}"
        )
