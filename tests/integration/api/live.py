"""A live embedded studio (uvicorn, SQLite, in-process tasks) wired to the protocol test
server, with a user, a scenario and an API token: what the client tests drive."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from simulator.serve import start_server_in_thread
from tests.integration.stack import Stack, embedded_studio

SETUP = """
import json
from tests.integration.api.factories import make_project, make_scenario, make_user
from studio.api.services import token_create
user = make_user("trainer")
scenario = make_scenario(make_project(user, slug="rl"))
_, clear = token_create(user=user, name="live")
print(json.dumps({"scenario": scenario.pk, "token": clear}))
"""


@dataclass
class LiveStudio:
    stack: Stack
    token: str
    scenario: int

    @property
    def base_url(self) -> str:
        return self.stack.base_url


@contextlib.contextmanager
def live_studio(**extra_env: str) -> Iterator[LiveStudio]:
    with (
        start_server_in_thread() as model,
        embedded_studio(
            extra_env={
                "STUDIO_MODEL_URL": model.base_url,
                "STUDIO_MODEL_NAME": "world-studio-test",
                "STUDIO_API_RATE_PER_S": "100000",
                "STUDIO_API_RATE_BURST": "100000",
                **extra_env,
            }
        ) as stack,
    ):
        data = json.loads(stack.shell(SETUP).strip().splitlines()[-1])
        yield LiveStudio(stack, data["token"], data["scenario"])
