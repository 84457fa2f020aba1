"""Load the sample traces (studio/traces/sample_data/) into a project, idempotently."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from studio.core.models import Project
from studio.traces.samples import samples_load


class Command(BaseCommand):
    help = "Import the real sample traces; running it again creates nothing new."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--project", required=True, help="slug of an existing project")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with slug {options['project']!r}")
        loaded = samples_load(project=project)
        if options["verbosity"] > 1:
            for trace, new in loaded:
                self.stdout.write(f"{'created' if new else 'exists '} {trace.title}")
        if options["verbosity"] > 0:
            created = sum(new for _, new in loaded)
            self.stdout.write(f"Samples: {created} trace(s) created in {project.slug}.")
