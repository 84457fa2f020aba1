"""A Linux terminal: the agent types keystrokes or commands, the world model shows the screen."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from simulator.domains._prompt import build_prompt
from simulator.domains._shell import (
    SCREEN_FORMAT,
    SHELL_FIELDS,
    files_section,
    machine_section,
    parse_shell_action,
    read_shell,
    shell_extras_problems,
)
from simulator.domains.base import TERMINAL, Action, Domain, ReadAction
from simulator.domains.forms import Composer

if TYPE_CHECKING:
    from simulator.world import World

_ROLE = """\
You are the world model of a Linux machine reached through an interactive terminal. \
An agent types keystrokes or commands; you play the shell, the file system, the \
installed programs and the network they see, and show what the terminal prints."""

_RULES = (
    "Files, directories, environment variables, the working directory and running "
    "processes persist between actions exactly as the commands left them.",
    "Programs behave like their real versions: real flags, real error messages, real "
    "exit behaviour. A missing file or command fails the way bash reports it.",
    "The seed files below exist at the start, with exactly the content given.",
)


class TerminalDomain(Domain):
    """Keystroke lists (terminal-bench style) or plain shell commands."""

    name = "terminal"
    title = "Terminal"
    observation_formats = (TERMINAL,)
    renderer = TERMINAL
    action_fence = "json"
    #: A command may print nothing (``mkdir x``).
    allows_empty_observation = True
    example_action = "ls -la"
    initial_label = "Initial screen"
    initial_help = "The terminal as the agent first sees it."
    starter_observation = "user@workstation:~$ "
    editor_fields = SHELL_FIELDS

    def system_prompt(self, world: World) -> str:
        return build_prompt(
            world,
            role=_ROLE,
            sections=[
                ("Machine", machine_section(world.extras)),
                ("Seed files", files_section(world.extras)),
            ],
            rules=_RULES,
            observation_format=SCREEN_FORMAT,
        )

    def parse_action(self, raw: str, world: World) -> Action:
        return parse_shell_action(raw)

    def read_leniently(self, raw: str) -> ReadAction:
        return read_shell(raw)

    def composer(self, world: World, observation: str) -> Composer:
        """A shell's composer is its command line."""
        return Composer(action_label="Command", action_placeholder=self.example_action)

    def validate_extras(self, extras: Mapping[str, Any]) -> list[str]:
        return shell_extras_problems(extras)
