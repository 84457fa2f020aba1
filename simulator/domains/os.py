"""A desktop computer: pyautogui code in, the next accessibility tree out (OSWorld style)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from simulator.domains._calls import Call, parse_calls, strip_fence
from simulator.domains._prompt import build_prompt, dump_json
from simulator.domains._readers import Source, clip, format_call, loose_text, read_python_calls
from simulator.domains.base import OS_A11Y, Action, Domain, ReadAction, unread
from simulator.domains.forms import Composer, ComposerField, EditorField, whole_number
from simulator.errors import InvalidAction

if TYPE_CHECKING:
    from simulator.world import World

_ROLE = """\
You are the world model of a desktop computer (an Ubuntu GNOME session unless the \
world says otherwise). An agent controls it with pyautogui code: mouse moves, clicks, \
typing and hotkeys at screen coordinates; you play the operating system and its \
applications, and return the screen's accessibility tree after the action."""

_RULES = (
    "A click acts on the element whose box contains the point; a click on empty space "
    "changes nothing. Typed text goes to the focused element.",
    "Windows, open files, settings and application state persist between actions; "
    "dialogs stay open until dismissed.",
    "Positions and sizes are in screen pixels and stay consistent between steps for "
    "elements that did not move.",
)

# observations.OS_TABLE_HEADER with its tabs written as \t (spelt out here: this
# module is imported while simulator.observations may still be initialising).
_TAB_HEADER = r"tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
_FORMAT = f"""\
The accessibility tree as a tab-separated table: the header line \
`{_TAB_HEADER}`, then one row per \
visible element with exactly those seven columns; position as `(x, y)` and size as \
`(w, h)`. No Markdown fences, no commentary.
If the initial state uses the indented tree form instead (`role 'name' (x, y, w, h)` \
per line, two spaces per level), keep using that form."""

_SPECIALS = ("DONE", "FAIL", "WAIT")
_POINTER = frozenset(
    [
        "click",
        "doubleClick",
        "tripleClick",
        "rightClick",
        "middleClick",
        "moveTo",
        "moveRel",
        "move",
        "dragTo",
        "dragRel",
        "drag",
        "mouseDown",
        "mouseUp",
    ]
)
_SCROLL = frozenset(("scroll", "hscroll", "vscroll"))
_KEYS = frozenset(("press", "keyDown", "keyUp", "hotkey", "typewrite", "write"))
_CHECKED = _POINTER | _SCROLL | _KEYS


#: The composer's verbs, then the special answers.
_COMPOSER_VERBS = (
    "click",
    "doubleClick",
    "rightClick",
    "moveTo",
    "typewrite",
    "press",
    "hotkey",
    "scroll",
    *_SPECIALS,
)
_STARTER = (
    "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)\n"
    "frame\tDesktop\t\t\t\t(0, 0)\t(1920, 1080)\n"
    "push-button\tFiles\t\t\t\t(10, 40)\t(64, 64)\n"
)


def _compose(fields: Mapping[str, str]) -> str:
    """pyautogui code from the composer's verb, text or keys, and point."""
    verb, value = fields.get("verb", "").strip(), fields.get("value", "")
    if verb in _SPECIALS:
        return verb
    if verb in ("typewrite", "press"):
        return f"pyautogui.{verb}({value!r})"
    if verb == "hotkey":
        keys = ", ".join(repr(key.strip()) for key in value.split("+") if key.strip())
        return f"pyautogui.hotkey({keys})"
    if verb == "scroll":
        return f"pyautogui.scroll({whole_number(value, name='scroll', default=-300)})"
    if verb:
        x = whole_number(fields.get("x", ""), name="x", default=0)
        y = whole_number(fields.get("y", ""), name="y", default=0)
        return f"pyautogui.{verb}({x}, {y})"
    return ""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check(call: Call) -> None:
    module, _, function = call.func.rpartition(".")
    if call.func == "time.sleep":
        if len(call.args) != 1 or not _is_number(call.args[0]) or call.args[0] < 0:
            raise InvalidAction("time.sleep() takes one number of seconds >= 0")
        return
    if module != "pyautogui" or function not in _CHECKED:
        raise InvalidAction(
            f"{call.func}() is not allowed; use pyautogui.click/doubleClick/rightClick/moveTo/"
            "dragTo/scroll/typewrite/write/press/hotkey/keyDown/keyUp, time.sleep, or "
            "DONE / FAIL / WAIT"
        )
    if function in _POINTER and not all(_is_number(arg) for arg in call.args[:2]):
        raise InvalidAction(f"{call.func}(): x and y must be numbers")
    if function in _SCROLL and not (call.args and _is_number(call.args[0])):
        raise InvalidAction(f"{call.func}(): the first argument must be a number of clicks")
    if function in ("typewrite", "write") and not (
        call.args and isinstance(call.args[0], str | list)
    ):
        raise InvalidAction(f"{call.func}(): the first argument must be the text to type")
    if function in ("press", "keyDown", "keyUp", "hotkey") and not (
        call.args and all(isinstance(arg, str | list) for arg in call.args)
    ):
        raise InvalidAction(f"{call.func}(): give the key names as text")


_DISPLAYED_CALLS = 3


def _call_dict(call: Call) -> dict[str, Any]:
    return {"func": call.func, "args": list(call.args), "kwargs": dict(call.kwargs)}


def _read_code(raw: str) -> ReadAction:
    """Free-form agent code: its calls, pyautogui ones checked, any other API noted.

    OSWorld-style agents call their own helpers (``Agent.click``,
    ``CalcTools.set_cell_value``) and wrap calls in imports, loops and sleeps; the
    code is parsed with :mod:`ast`, never run. Code that is not even Python is
    still the agent's action, kept with a note.
    """
    text = loose_text(raw)
    if not text:
        return unread(raw, "the action is empty")
    if text in _SPECIALS:
        return ReadAction(raw=raw, action=Action(raw=raw, kind=text.lower()), display=text)
    first_line = clip(text.splitlines()[0])
    try:
        code = read_python_calls(text)
    except ValueError as error:
        action = Action(raw=raw, kind="python", args={"calls": []})
        return ReadAction(
            raw=raw, action=action, display=first_line, notes=(f"{error}; kept as code",)
        )
    notes = list(code.notes)
    unchecked = []
    for call in code.calls:
        module, _, function = call.func.rpartition(".")
        if not (call.func == "time.sleep" or (module == "pyautogui" and function in _CHECKED)):
            unchecked.append(call.func)
        elif not any(isinstance(value, Source) for value in (*call.args, *call.kwargs.values())):
            try:  # values computed at run time were noted already and cannot be checked
                _check(call)
            except InvalidAction as error:
                notes.append(str(error))
    if unchecked:
        names = ", ".join(dict.fromkeys(unchecked))
        notes.append(f"not a studio pyautogui action, read without checking: {names}")
    if not code.calls:
        notes.append("no function call found; kept as code")
    shown = [format_call(call.func, call.args, call.kwargs) for call in code.calls]
    display = "; ".join(shown[:_DISPLAYED_CALLS]) + ("; …" if len(shown) > _DISPLAYED_CALLS else "")
    action = Action(
        raw=raw,
        kind="python" if unchecked or not code.calls else "pyautogui",
        args={"calls": [_call_dict(call) for call in code.calls]},
    )
    return ReadAction(raw=raw, action=action, display=display or first_line, notes=tuple(notes))


class OsDomain(Domain):
    """pyautogui calls with literal arguments (checked with ``ast``), or DONE / FAIL / WAIT."""

    name = "os"
    title = "Desktop"
    observation_formats = (OS_A11Y,)
    renderer = OS_A11Y
    gui = True
    action_fence = "python"
    task_in_first_turn = True
    example_action = "pyautogui.click(100, 200)"
    initial_label = "Initial screen"
    initial_help = "The desktop's accessibility table or tree."
    starter_observation = _STARTER
    editor_fields = (
        EditorField("screen", "Screen", "json", 'JSON: {"width": 1920, "height": 1080}'),
    )

    def system_prompt(self, world: World) -> str:
        screen = world.extras.get("screen")
        return build_prompt(
            world,
            role=_ROLE,
            sections=[("Screen", dump_json(screen) if screen else "")],
            rules=_RULES,
            observation_format=_FORMAT,
        )

    def parse_action(self, raw: str, world: World) -> Action:
        text = strip_fence(raw)
        if text in _SPECIALS:
            return Action(raw=raw, kind=text.lower())
        try:
            calls = parse_calls(text, allowed_imports=frozenset(("pyautogui", "time")))
        except ValueError as error:
            raise InvalidAction(
                f"{error}; an os action is pyautogui code or DONE / FAIL / WAIT"
            ) from None
        for call in calls:
            _check(call)
        return Action(
            raw=raw, kind="pyautogui", args={"calls": [_call_dict(call) for call in calls]}
        )

    def read_leniently(self, raw: str) -> ReadAction:
        return _read_code(raw)

    def composer(self, world: World, observation: str) -> Composer:
        """A pyautogui verb (or DONE / FAIL / WAIT), its text or keys, and a point."""
        return Composer(
            fields=(
                ComposerField("verb", "Action", "choice", choices=_COMPOSER_VERBS),
                ComposerField("value", "Text / keys", placeholder="ctrl+s"),
                ComposerField("x", "x", "number"),
                ComposerField("y", "y", "number"),
            ),
            action_placeholder=self.example_action,
        )

    def compose(self, world: World, fields: Mapping[str, str]) -> str:
        return _compose(fields)

    def validate_extras(self, extras: Mapping[str, Any]) -> list[str]:
        screen = extras.get("screen", {"width": 1, "height": 1})
        if not (
            isinstance(screen, Mapping)
            and all(_is_number(screen.get(key)) for key in ("width", "height"))
        ):
            return ["screen: must be an object with numeric width and height"]
        return []
