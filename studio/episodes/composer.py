"""The action composer: the domain's form, composed into one action text.

The domain describes its composer (:meth:`simulator.domains.Domain.composer`) and
turns the posted fields into an action (:meth:`~simulator.domains.Domain.compose`);
this module only adds what holds for every domain. The page sends the form's
fields (over the WebSocket, or to the validate view); a non-empty free-text
``action`` field always wins, so any action can be typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simulator.prompting import domain_for
from simulator.world import World


def composer_context(world: World, observation: str) -> dict[str, Any]:
    """What the composer template shows for this world and the current observation."""
    return {"composer": domain_for(world).composer(world, observation)}


def compose_action(world: World, fields: Mapping[str, Any]) -> str:
    """The action text for the composer's fields ("" when they make none).

    Raises :class:`simulator.errors.InvalidAction` when a field cannot be used.
    """
    free = str(fields.get("action", "") or "").strip()
    if free:
        return free
    # A QueryDict's get() is its last value; a WebSocket message may carry numbers.
    values = {str(name): str(fields.get(name, "") or "") for name in fields}
    return domain_for(world).compose(world, values)
