"""What a domain is: one place that says how a kind of environment is simulated.

A domain names its world-model system prompt, how an agent's action is parsed
and validated, which observation formats it accepts, which renderer shows its
observations and which verifiers check them. It also says what the studio asks
about it (whether it shows screens, the world editor's fields, the composer), so
the studio never names a domain. Custom domains subclass :class:`Domain` and call
:func:`simulator.domains.register`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from simulator import observations
from simulator.awb_turns import STATE, TASK
from simulator.domains.forms import Composer, EditorField
from simulator.errors import InvalidAction

if TYPE_CHECKING:
    from simulator.world import World

# Observation format names used across detection, verifiers and renderers.
HTML = "html"
AXTREE = "axtree"  # BrowserGym accessibility tree text: [bid] role 'name'
ARIA_YAML = "aria-yaml"  # Playwright ARIA snapshot: - button "Add" [ref=e5]
OS_A11Y = "os-a11y"  # desktop accessibility tree or table
UIAUTOMATOR_XML = "uiautomator-xml"
ANDROID_ELEMENTS = "android-elements"  # AndroidWorld-style numbered element list
JSON = "json"
TERMINAL = "terminal"  # terminal screen text
TEXT = "text"  # any other plain text


@dataclass(frozen=True)
class Action:
    """A validated action. ``raw`` is exactly what the agent sent and goes into history."""

    raw: str
    kind: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadAction:
    """An imported action as read: never refused, because a real trace is authoritative.

    ``raw`` is exactly as recorded. ``action`` is the normalised action anchors and
    verifiers use, or None when nothing could be parsed. ``display`` is a short
    normalised call for reviewers, e.g. ``click(index=46)``; the raw text when
    unparsed. ``notes`` say in plain words what could not be validated.
    """

    raw: str
    action: Action | None
    display: str
    notes: tuple[str, ...] = ()


def unread(raw: str, note: str) -> ReadAction:
    """A reading that found no action: the raw text is shown as it is, with why."""
    return ReadAction(raw=raw, action=None, display=raw, notes=(note,))


class Domain(ABC):
    """Base class of the seven built-in domains and of custom ones."""

    name: ClassVar[str]
    title: ClassVar[str]
    observation_formats: ClassVar[tuple[str, ...]]
    renderer: ClassVar[str]
    #: True when observations are JSON and constrained decoding may be asked for.
    json_observations: ClassVar[bool] = False
    #: True when observations are screens (a page, a desktop, a phone) shown rendered.
    gui: ClassVar[bool] = False
    #: The fence language of an action in AgentWorldBench's turn text (None: not fenced).
    action_fence: ClassVar[str | None] = None
    #: True when the benchmark states the agent's task in the first turn, not the system prompt.
    task_in_first_turn: ClassVar[bool] = False
    #: A valid action in this domain's syntax: the composer's placeholder, the example
    #: an LLM agent is shown and the action a prompt preview sends.
    example_action: ClassVar[str] = ""
    #: The world editor's label and help for the initial observation.
    initial_label: ClassVar[str] = "Initial observation"
    initial_help: ClassVar[str] = ""
    #: A new world's initial observation, for its author to edit.
    starter_observation: ClassVar[str] = ""
    #: The world editor's fields for this domain's ``World.extras``.
    editor_fields: ClassVar[tuple[EditorField, ...]] = ()

    def first_turn_sections(self, world: World, task: str) -> list[tuple[str, str]]:
        """The sections of turn 1 before its action, in the agentworld layout.

        The world's initial state opens the episode the way the benchmark's rows
        do, so the model sees it where it was trained to; a domain whose rows
        carry the task there too (os) gets it first.
        """
        sections = [(TASK, task)] if self.task_in_first_turn and task else []
        if world.initial_observation.strip():
            sections.append((STATE, world.initial_observation))
        return sections

    def tool_definitions(self, world: World) -> list[Mapping[str, Any]]:
        """The tools the agent may call in ``world`` (``extras["tools"]``), for prompt templates."""
        tools = world.extras.get("tools", [])
        return (
            [tool for tool in tools if isinstance(tool, Mapping)] if isinstance(tools, list) else []
        )

    @abstractmethod
    def system_prompt(self, world: World) -> str:
        """The world model's system prompt for this world (template + world definition)."""

    @abstractmethod
    def parse_action(self, raw: str, world: World) -> Action:
        """Validate an action; raises :class:`simulator.errors.InvalidAction` with a helpful message."""

    def detect_format(self, observation: str) -> str | None:
        """Which of ``observation_formats`` the text is in, or None if none fits."""
        return observations.detect_format(observation, self.observation_formats)

    def format_of(self, observation: str) -> str:
        """The format to write this domain's output in, after ``observation``.

        The observation's own format when it has a structured one, else the domain's
        first: an enforced error after a tool's plain-text answer is still the JSON
        error object an MCP server sends.
        """
        found = self.detect_format(observation)
        return self.observation_formats[0] if found in (None, TEXT) else found

    def first_action(self, world: World) -> str:
        """An action to preview a world's first step with, when nothing scripts one."""
        return self.example_action

    def composer(self, world: World, observation: str) -> Composer:
        """The action composer for ``world``, on the screen ``observation`` shows.

        The default offers only the free-text box; a domain with a form overrides
        this and :meth:`compose`.
        """
        return Composer(action_placeholder=self.example_action)

    def compose(self, world: World, fields: Mapping[str, str]) -> str:
        """The action text for the composer's posted ``fields`` ("" when they make none).

        Raises :class:`simulator.errors.InvalidAction` when a field cannot be used
        (a coordinate that is not a number).
        """
        return ""

    def validate_extras(self, extras: Mapping[str, Any]) -> list[str]:
        """Problems with a world's domain extras (empty when valid)."""
        return []

    def read_leniently(self, raw: str) -> ReadAction:
        """Read an imported action in any style this domain's real traces use.

        Overridden by each built-in domain. The default reads nothing, so that a
        custom domain still imports (with a note) before it has a reader.
        """
        return unread(raw, f"the {self.name} domain has no reader for imported actions")

    def read_action(self, raw: str, world: World | None = None) -> ReadAction:
        """Read an imported action; never raises, whatever the text.

        Imports must not be refused, so the strict :meth:`parse_action` only decides
        whether the reading is also valid in ``world``: when it is, its action
        replaces the lenient one (with the strict defaults filled in); when it is
        not, its message becomes the first note (the only one if nothing was
        read). Any error from either parser is a note too, so one odd turn can
        never stop a whole import.
        """
        try:
            reading = self.read_leniently(raw)
        except Exception as error:  # a reader bug must not refuse real data
            reading = unread(raw, f"the action could not be read ({type(error).__name__})")
        if world is None:
            return reading
        try:
            action = self.parse_action(raw, world)
        except InvalidAction as error:
            note = str(error)
        except Exception as error:  # e.g. RecursionError on absurdly nested JSON
            note = f"the action could not be validated ({type(error).__name__})"
        else:
            return replace(reading, action=action, notes=())
        # When nothing was read, the strict message alone says what this world expects.
        return replace(reading, notes=(note, *reading.notes) if reading.action else (note,))
