"""UI interrupts: a modal, a permission dialog or a cookie banner covers the screen."""

from __future__ import annotations

from simulator.perturbations.registry import Enforced, KindInfo, Param
from simulator.perturbations.shapes import observation_format, overlay
from simulator.perturbations.spec import Perturbation, StepContext

_DEFAULTS = {
    "modal": (
        "Subscribe to our newsletter",
        "Get 10% off your first order.",
        ["Close", "Subscribe"],
    ),
    "permission": (
        "Allow access?",
        "This app wants to access your location.",
        ["Don't allow", "Allow"],
    ),
    "cookie_banner": (
        "We use cookies",
        "We use cookies to improve your experience.",
        ["Reject all", "Accept all"],
    ),
}


def _dialog(p: Perturbation) -> tuple[str, str, list[str]]:
    title, text, buttons = _DEFAULTS[str(p.param("style"))]
    return (
        str(p.param("title")) or title,
        str(p.param("text")) or text,
        list(p.param("buttons")) or buttons,
    )


def _instruction(p: Perturbation, ctx: StepContext) -> str:
    title, text, buttons = _dialog(p)
    kind = str(p.param("style")).replace("_", " ")
    return (
        f"A {kind} now covers the screen and must appear in the observation: title "
        f"'{title}', text '{text}', buttons {', '.join(repr(b) for b in buttons)}."
    )


def _enforce(p: Perturbation, observation: str, ctx: StepContext) -> Enforced:
    fmt = observation_format(observation, ctx.domain)
    title, text, buttons = _dialog(p)
    result = overlay(fmt, observation, title, text, buttons)
    if result is None:
        return Enforced(observation, f"{fmt} is not a GUI observation; unchanged", changed=False)
    return Enforced(
        result,
        f"added a {p.param('style')} '{title}' to the {fmt} observation",
        {"format": fmt, "chars_before": len(observation), "chars_after": len(result)},
    )


INFO = KindInfo(
    name="ui_interrupt",
    title="UI interrupt",
    description="A modal, permission dialog or cookie banner overlays a GUI observation.",
    params=(
        Param("style", "str", "modal", "Kind of interrupt.", tuple(_DEFAULTS)),
        Param("title", "str", "", "Dialog title (empty: the style's default)."),
        Param("text", "str", "", "Dialog text (empty: the style's default)."),
        Param("buttons", "list[str]", [], "Button labels (empty: the style's default)."),
    ),
    instruction=_instruction,
    enforce=_enforce,
)
