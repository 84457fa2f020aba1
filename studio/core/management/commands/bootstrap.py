"""First-run setup for ``make run``: a local account, a sandbox project, examples.

The password is random, shown once and kept in var/first-login.txt (mode 0600),
so no fixed password ever lives in the repository.
"""

from __future__ import annotations

import getpass
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand
from django.db import transaction

from studio.core.models import SANDBOX_SLUG, Membership, Project, Role

SANDBOX = "Sandbox"


class Command(BaseCommand):
    help = (
        "Create a local account and a sandbox project on first run; "
        "load example worlds and sample traces."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="", help="default: your login name")
        parser.add_argument("--no-examples", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        login_file = settings.VAR_DIR / "first-login.txt"
        user_model = get_user_model()
        with transaction.atomic():
            if not user_model.objects.exists():
                username = options["username"] or _local_username()
                password = secrets.token_urlsafe(12)
                user_model.objects.create_superuser(username, "", password)
                login_file.write_text(f"username: {username}\npassword: {password}\n")
                login_file.chmod(0o600)
                self.stdout.write(f"Created the local account {username!r}.")
            owner = user_model.objects.order_by("id").first()
            if owner is None:  # pragma: no cover  (created just above)
                raise RuntimeError("no user")
            project, _ = Project.objects.get_or_create(
                slug=SANDBOX_SLUG,
                defaults={
                    "name": SANDBOX,
                    "description": "Example worlds and scenarios, and real sample traces.",
                },
            )
            Membership.objects.get_or_create(
                project=project, user=owner, defaults={"role": Role.OWNER}
            )
        if not options["no_examples"]:
            # The example worlds and the sample traces live in their own apps.
            for command in ("load_examples", "load_samples"):
                if command in get_commands():
                    call_command(command, project=SANDBOX_SLUG, verbosity=0)
        if login_file.exists():
            self.stdout.write(f"Sign in with the account in {login_file}:")
            self.stdout.write(login_file.read_text().rstrip())


def _local_username() -> str:
    try:
        name = getpass.getuser()
    except Exception:
        name = ""
    return name if name and name != "root" else "researcher"
