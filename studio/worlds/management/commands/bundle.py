"""Export a scenario to a bundle file, or import a bundle into a project.

manage.py bundle export --scenario ID --out PATH   (PATH "-" writes to stdout)
manage.py bundle import PATH --project SLUG
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from studio.core.models import Project
from studio.worlds.models import Scenario
from studio.worlds.services import BundleRejected, bundle_export, bundle_import


class Command(BaseCommand):
    help = "Export or import scenario bundles (a world revision + a scenario, versioned JSON)."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        export = sub.add_parser("export", help="write a scenario's bundle")
        export.add_argument("--scenario", type=int, required=True)
        export.add_argument("--out", required=True, help='a file path, or "-" for stdout')
        imp = sub.add_parser("import", help="create a world and a scenario from a bundle")
        imp.add_argument("path")
        imp.add_argument("--project", required=True, help="slug of the target project")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "export":
            scenario = Scenario.objects.filter(pk=options["scenario"]).first()
            if scenario is None:
                raise CommandError(f"No scenario {options['scenario']}")
            text = bundle_export(scenario=scenario)
            if options["out"] == "-":
                sys.stdout.write(text)
            else:
                Path(options["out"]).write_bytes(text.encode("utf-8"))
                self.stdout.write(f"Wrote {options['out']}")
            return
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with slug {options['project']!r}")
        try:
            text = Path(options["path"]).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{options['path']}: {exc}") from None
        try:
            scenario, _ = bundle_import(project=project, text=text)
        except BundleRejected as exc:
            lines = "\n".join(f"  - {p}" for p in exc.problems)
            raise CommandError(
                f"{options['path']}: {len(exc.problems)} problem(s), nothing imported:\n{lines}"
            ) from None
        self.stdout.write(
            f"Imported scenario {scenario.pk} “{scenario.title}” into {project.slug}."
        )
