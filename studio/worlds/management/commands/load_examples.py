"""Load the example library (studio/worlds/examples/*.json) into a project, idempotently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from studio.core.models import Membership, Project, Role
from studio.worlds.services import BundleRejected, bundle_import

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"


class Command(BaseCommand):
    help = "Import the example worlds and scenarios; running it again creates nothing new."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--project", required=True, help="slug of an existing project")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with slug {options['project']!r}")
        owner = Membership.objects.filter(project=project, role=Role.OWNER).first()
        created = 0
        for path in sorted(EXAMPLES_DIR.glob("*.json")):
            try:
                scenario, new = bundle_import(
                    project=project,
                    text=path.read_text(encoding="utf-8"),
                    user=owner.user if owner else None,
                    skip_existing=True,
                )
            except BundleRejected as exc:
                raise CommandError(f"{path.name}: {'; '.join(exc.problems)}") from None
            created += new
            if options["verbosity"] > 1:
                self.stdout.write(
                    f"{'created' if new else 'exists '} {scenario.title} ({path.name})"
                )
        if options["verbosity"] > 0:
            self.stdout.write(f"Examples: {created} scenario(s) created in {project.slug}.")
