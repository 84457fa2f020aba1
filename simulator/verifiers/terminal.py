"""Terminal screens end with a prompt: once the session shows prompts, a finished command
leaves the shell waiting at a new one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulator.observations import ends_with_prompt, has_prompt_line
from simulator.verifiers.base import VerifierResult, failed, passed

if TYPE_CHECKING:
    from simulator.domains.base import Action

NAME = "terminal_prompt"


def _still_typing(action: Action | None) -> bool:
    # Keystrokes that do not end with Enter leave a half-typed line, not a new prompt.
    if action is None or action.kind != "keystrokes":
        return False
    steps = action.args.get("keystrokes") or [{}]
    return not str(steps[-1].get("keystrokes", "")).endswith(("\n", "\r"))


def terminal_prompt(
    observation: str, *, previous: str | None = None, action: Action | None = None
) -> VerifierResult | None:
    """Require a final prompt when the session shows prompts; None when it does not.

    Sessions recorded as bare command output (stdout only) have no prompts to keep.
    """
    shows_prompts = has_prompt_line(observation) or (
        previous is not None and ends_with_prompt(previous)
    )
    if not shows_prompts or _still_typing(action):
        return None
    if ends_with_prompt(observation):
        return passed(NAME, "the screen ends with a shell prompt")
    lines = [line for line in observation.splitlines() if line.strip()]
    last = lines[-1].strip()[:60] if lines else ""
    return failed(NAME, f"the screen does not end with a shell prompt (last line: {last!r})")
