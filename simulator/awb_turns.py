"""AgentWorldBench's turn text: the layout every published Qwen-AgentWorld result used.

A user turn is ``### Turn N``, then sections, each a bold heading line and its
body, separated by blank lines, the last always ``**Action:**`` followed by the
action, usually in a Markdown fence (```` ```json ````, ```` ```python ````, any
language, or none)::

    ### Turn 1
    **Task Instruction:**
    Turn on dark mode

    **Current State:**
    <the screen>

    **Action:**
    ```python
    pyautogui.click(10, 20)
    ```

The turn the model must answer ends with an instruction text (:data:`INSTRUCTION`
is the benchmark's usual one; a row's own text is authoritative). An assistant
turn is :data:`OBSERVATION_MARKER`, a newline and the observation.

:func:`read_turn` and :func:`render_turn` are exact inverses on every text
:func:`read_turn` accepts, so a reader never changes what it shows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

OBSERVATION_MARKER = "**Environment Observation:**"
INSTRUCTION = (
    "\n\nPlease analyze the input above and predict the realistic output/response that the "
    "environment would produce.\n\nFirst, think step by step. Then, provide the simulated "
    "environment observation wrapped strictly within the "
    "<predicted_observation></predicted_observation> tags."
)
ACTION = "Action"
TASK = "Task Instruction"
STATE = "Current State"

_HEADER = re.compile(r"\A### Turn (?P<n>\d+)\n")
# A section starts a line with a bold heading that ends in a colon, alone on its line.
_SECTION = re.compile(r"^\*\*(?P<heading>[^*\n]+?):\*\*\n", re.MULTILINE)
_FENCED = re.compile(r"\A```(?P<lang>[^\n`]*)\n(?P<body>.*)\n```\Z", re.DOTALL)


@dataclass(frozen=True)
class TurnText:
    """The parts of one turn prompt.

    ``sections`` are the (heading, body) pairs before the action, in order.
    ``fence`` is the action's fence language (``""`` for a bare fence) or None
    when the action is not fenced.
    """

    index: int
    action: str
    fence: str | None = None
    sections: tuple[tuple[str, str], ...] = ()

    def section(self, heading: str) -> str | None:
        """The body of the section called ``heading``, if the turn has one."""
        return next((body for name, body in self.sections if name == heading), None)


def render_turn(
    index: int,
    action: str,
    *,
    fence: str | None = None,
    sections: Sequence[tuple[str, str]] = (),
) -> str:
    """One turn prompt (without the instruction the answered turn ends with)."""
    parts = [f"**{heading}:**\n{body}" for heading, body in sections]
    parts.append(f"**{ACTION}:**\n{fenced(action, fence)}")
    return f"### Turn {index}\n" + "\n\n".join(parts)


def fenced(action: str, fence: str | None) -> str:
    """``action`` in a Markdown fence of language ``fence`` (None: as it is)."""
    return action if fence is None else f"```{fence}\n{action}\n```"


def read_turn(text: str) -> TurnText | None:
    """The parts of a turn prompt, or None when ``text`` is not one.

    Accepted only when rendering the parts again gives back ``text`` exactly.
    """
    header = _HEADER.match(text)
    if header is None:
        return None
    starts = list(_SECTION.finditer(text, header.end()))
    if not starts or starts[0].start() != header.end() or starts[-1]["heading"] != ACTION:
        return None
    sections = []
    for match, following in zip(starts, [*starts[1:], None], strict=True):
        end = following.start() - 2 if following is not None else len(text)
        sections.append((match["heading"], text[match.end() : end]))
    *before, (_, action_text) = sections
    fence_match = _FENCED.match(action_text)
    fence, action = (
        (fence_match["lang"], fence_match["body"]) if fence_match else (None, action_text)
    )
    turn = TurnText(int(header["n"]), action, fence, tuple(before))
    if render_turn(turn.index, turn.action, fence=turn.fence, sections=turn.sections) != text:
        return None
    return turn


def render_observation(observation: str) -> str:
    """One assistant turn: the marker line, then the observation."""
    return f"{OBSERVATION_MARKER}\n{observation}"


def read_observation(response: str) -> str:
    """The observation of an assistant turn (the text itself when it has no marker)."""
    return response.removeprefix(OBSERVATION_MARKER + "\n")
