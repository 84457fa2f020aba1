"""Well-formedness of a structured observation, once its format is known: tags closed
(HTML, XML), AXTree node lines with bids, ARIA snapshot items, element-list numbering."""

from __future__ import annotations

from simulator import observations
from simulator.domains.base import (
    ANDROID_ELEMENTS,
    ARIA_YAML,
    AXTREE,
    HTML,
    OS_A11Y,
    UIAUTOMATOR_XML,
)
from simulator.verifiers.base import VerifierResult, failed, passed


def _uiautomator_problems(text: str) -> list[str]:
    try:
        nodes = observations.parse_uiautomator(text)
    except ValueError as error:
        return [str(error)]
    return [] if nodes else ["the hierarchy has no <node> elements"]


_CHECKS = {
    HTML: ("tags_closed", observations.html_problems, "every non-optional tag is closed"),
    UIAUTOMATOR_XML: ("tags_closed", _uiautomator_problems, "the XML parses, root <hierarchy>"),
    OS_A11Y: ("a11y_tree", observations.os_a11y_problems, "the accessibility tree parses"),
    AXTREE: (
        "axtree_lines",
        observations.axtree_problems,
        "every line is a [bid] role 'name' node",
    ),
    ARIA_YAML: ("aria_items", observations.aria_yaml_problems, "every line is an ARIA item"),
    ANDROID_ELEMENTS: (
        "element_list",
        observations.android_elements_problems,
        "elements are numbered 0, 1, 2, ...",
    ),
}


def well_formed(observation_format: str, observation: str) -> VerifierResult | None:
    """The structure check for ``observation_format``, or None for free-text formats."""
    if observation_format not in _CHECKS:
        return None
    name, check, success = _CHECKS[observation_format]
    problems = check(observation)
    return failed(name, "; ".join(problems)) if problems else passed(name, success)
