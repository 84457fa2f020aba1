"""Real observations are authoritative: every one recorded in tests/fixtures passes its
domain's verifiers, and a false alarm on one is a verifier bug.

One case per observation, so that a failure names the sample. The AXTree cases add
WorkArena-shaped trees written here the way BrowserGym prints them (frame-prefixed
bids, a form field's ``value=`` after its name, flags and ``key=repr(value)``
properties, bid-less text nodes) and one in WebArena's own ``key: value`` style,
because the recorded WebArena trees happen not to show every one of those shapes.
"""

from __future__ import annotations

import pytest

from simulator import observations
from simulator.axtree import AxNode, axtree_lines, axtree_problems
from simulator.domains import get_domain
from simulator.domains.base import Action
from simulator.domains.web import WebDomain
from simulator.verifiers import run_verifiers
from simulator.world import World
from tests.unit.verifiers._fixtures import (
    OBSERVATION_FILES,
    playwright_mcp_snapshots,
    read,
    tau_bench_tool_results,
    terminal_triples,
    webarena_log_actions,
    webarena_log_trees,
)

WORKARENA_FORM = """\
RootWebArea 'Incident | ServiceNow', focused, url='https://dev12345.service-now.com/now/nav/ui/classic/params/target/incident.do'
\t[47] banner ''
\t\t[52] button 'All', hasPopup='menu', expanded=False
\t\t[58] combobox 'Search', autocomplete='both', hasPopup='listbox', expanded=False
\t[a] Iframe 'Main Content'
\t\tRootWebArea 'New Incident', url='https://dev12345.service-now.com/incident.do?sys_id=-1'
\t\t\t[a108] heading 'Incident New record'
\t\t\t[a195] LabelText ''
\t\t\t\tStaticText 'Number'
\t\t\t[a198] textbox 'Number' value='INC0010042', required
\t\t\t[a231] combobox 'Caller' value='', hasPopup='menu', expanded=False, required, focused
\t\t\t[a260] combobox 'Urgency' value='3 - Low', hasPopup='menu', expanded=False
\t\t\t\t[a261] option '1 - High', selected=False
\t\t\t\t[a263] option '3 - Low', selected=True
\t\t\t[a300] checkbox 'Knowledge', checked='false'
\t\t\t[a312] textbox 'Short description' value='Laptop won’t boot – “blue screen” since Monday', required
\t\t\t[a313] textbox 'Description' value='Steps:\\n1. Power on'
\t\t\t[a330] button 'Submit'
"""
WORKARENA_LIST = """\
RootWebArea 'Incidents | ServiceNow', focused, url='https://dev12345.service-now.com/now/nav/ui/classic/params/target/incident_list.do'
\t[a] Iframe 'Main Content'
\t\tRootWebArea 'Incidents', url='https://dev12345.service-now.com/incident_list.do'
\t\t\t[a70] navigation 'Incidents'
\t\t\t\t[a85] button 'Actions on selected rows', hasPopup='menu', expanded=False
\t\t\t\t[a91] searchbox 'Search' value='printer'
\t\t\t[a140] grid 'Incidents. Showing 1 to 1 of 1 records', multiselectable=False
\t\t\t\t[a141] rowgroup ''
\t\t\t\t\t[a142] row ''
\t\t\t\t\t\t[a143] columnheader 'Select All'
\t\t\t\t\t\t\t[a144] checkbox 'Select All', checked='mixed'
\t\t\t\t\t\t[a150] columnheader 'Number'
\t\t\t\t[a200] rowgroup ''
\t\t\t\t\t[a201] row 'INC0010042'
\t\t\t\t\t\t[a203] checkbox 'Select record for action: INC0010042', checked='false'
\t\t\t\t\t\t[a206] link 'Open record: INC0010042', url='https://dev12345.service-now.com/incident.do?sys_id=9d385017c611228701d22104cc95c371'
\t\t\t\t\t\t[a210] gridcell '"Printer on 3rd floor" isn\\'t working'
\t\t\t\t\t\t\tStaticText '"Printer on 3rd floor" isn\\'t working'
\t\t\t[a400] generic, live='polite', atomic, relevant='additions text'
\t\t\tLineBreak
\t\t\t[a401] generic
\t\t\tStaticText '\\xa0'
"""
WORKARENA_CATALOG = """\
RootWebArea 'Service Catalog | ServiceNow', focused, url='https://dev12345.service-now.com/now/nav/ui/classic/params/target/catalog_home.do'
\t[a] Iframe 'Main Content'
\t\tRootWebArea 'Standard Laptop', url='https://dev12345.service-now.com/com.glideapp.servicecatalog_cat_item_view.do?sys_id=04b7e94b4f7b4200086eeed18110c7fd'
\t\t\t[a51] heading 'Standard Laptop'
\t\t\t[a60] link '', url='https://dev12345.service-now.com/catalog_home.do'
\t\t\t[a75] radiogroup 'What size monitor?'
\t\t\t\t[a76] radio '24"', checked='true'
\t\t\t\t[a78] radio '27" 4K — Dell\\'s UltraSharp', checked='false'
\t\t\t[a90] spinbutton 'Quantity' value=1, valuemin=1, valuemax=10
\t\t\t[a99] textbox 'Additional software requirements' value='Café app — ünïcode ✓'
\t\t\tStaticText 'Delivery time: 2 Days'
\t\t\t[a120] button 'Order Now', focused
"""
WEBARENA_ENV = """\
[1] RootWebArea 'Dashboard / Magento Admin' focused: True
\t[178] link 'Magento Admin Panel'
\t\t[201] img 'Magento Admin Panel'
\t[85] menubar '' orientation: horizontal
\t\t[87] link '\\ue604 DASHBOARD'
\t[1305] combobox 'Search' autocomplete: list hasPopup: listbox required: False expanded: False
\t[2196] StaticText 'Scope:'
\t[1633] checkbox 'Remember Me' checked: false
"""
WRITTEN_TREES = {
    "workarena-form": WORKARENA_FORM,
    "workarena-list": WORKARENA_LIST,
    "workarena-catalog": WORKARENA_CATALOG,
    "workarena-form-space-indented": WORKARENA_FORM.replace("\t", "  "),
    "webarena-env": WEBARENA_ENV,
}


def _tau_format(result: str) -> str:
    # tau-bench's errors and the empty result of its `think` tool are plain text.
    return "text" if not result or result.startswith("Error") else "json"


def _real_observations() -> list[object]:
    """(domain, observation, expected format), one pytest case per real observation."""
    cases: list[object] = [
        pytest.param(domain, read(relative), expected, id=relative)
        for domain, relative, expected in OBSERVATION_FILES
    ]
    cases += [
        pytest.param(
            "web", tree, "axtree", id=f"browsergym_webarena_190_12_shopping.log:step{step}"
        )
        for step, tree in enumerate(webarena_log_trees(), 1)
    ]
    cases += [
        pytest.param(
            "web", snapshot, "aria-yaml", id=f"playwright_mcp_saucedemo_products.md:yaml{index}"
        )
        for index, snapshot in enumerate(playwright_mcp_snapshots(), 1)
    ]
    for name, triple in terminal_triples():
        cases += [
            pytest.param(
                triple["domain"],
                step["observation"],
                "terminal",
                id=f"terminal_triples/{name}:history{index}",
            )
            for index, step in enumerate(triple["history"], 1)
        ]
        cases.append(
            pytest.param(
                triple["domain"],
                triple["truth"]["stdout"],
                "terminal",
                id=f"terminal_triples/{name}:truth",
            )
        )
    cases += [
        pytest.param(
            "mcp",
            result,
            _tau_format(result),
            id=f"tau_bench_airline_gpt-4o_record0_task0.json:tool-result{index}",
        )
        for index, result in enumerate(tau_bench_tool_results(), 1)
    ]
    cases += [pytest.param("web", tree, "axtree", id=name) for name, tree in WRITTEN_TREES.items()]
    return cases


def _failures(
    domain: str, observation: str, *, action: Action | None = None, previous: str | None = None
) -> list[str]:
    results = run_verifiers(domain, observation, action=action, previous=previous)
    assert results
    return [f"{r.name}: {r.reason}" for r in results if not r.passed]


@pytest.mark.parametrize(("domain", "observation", "expected"), _real_observations())
def test_each_real_observation_passes_its_domains_verifiers(domain, observation, expected):
    # As `python -m simulator verify` runs them: no action, no previous observation.
    assert get_domain(domain).detect_format(observation) == expected
    assert _failures(domain, observation, action=None, previous=None) == []


def test_every_tree_of_the_webarena_log_is_extracted():
    trees = webarena_log_trees()

    # The log has two steps; the extracted trees are the two observation files.
    assert len(trees) == 2
    assert trees[0] == read("web/webarena_shopping_step1.axtree.txt").rstrip("\n")
    assert trees[1] == read("web/webarena_shopping_step2.axtree.txt").rstrip("\n")
    assert playwright_mcp_snapshots() == [read("web/saucedemo_products.aria.yaml")]


def test_the_webarena_log_steps_pass_with_their_previous_page_and_action():
    trees = webarena_log_trees()
    world = World(domain="web", title="One Stop Market", initial_observation=trees[0])
    action = get_domain("web").parse_action(webarena_log_actions()[0], world)

    assert action.args["bid"] == "227"
    assert _failures("web", trees[1], action=action, previous=trees[0]) == []


@pytest.mark.parametrize(
    ("name", "triple"), [pytest.param(n, t, id=n) for n, t in terminal_triples()]
)
def test_each_terminal_session_passes_step_by_step(name, triple):
    domain = get_domain(triple["domain"])
    world = World(domain=domain.name, title=name)
    steps = [(s["action"], s["observation"]) for s in triple["history"]]
    steps.append((triple["action"], triple["truth"]["stdout"]))
    previous = None
    for raw, observation in steps:
        action = domain.parse_action(raw, world)
        assert _failures(domain.name, observation, action=action, previous=previous) == [], raw
        previous = observation


def test_tau_bench_results_pass_after_the_result_before_them():
    results = tau_bench_tool_results()

    for previous, result in zip(results, results[1:], strict=False):
        assert _failures("mcp", result, previous=previous) == [], result[:60]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "RootWebArea 'One Stop Market', focused, url='http://shop.example/'",
            AxNode(
                0,
                None,
                "RootWebArea",
                "One Stop Market",
                (("focused", ""), ("url", "http://shop.example/")),
            ),
        ),
        (
            "[a198] textbox 'Number' value='INC0010042', required",
            AxNode(0, "a198", "textbox", "Number", (("value", "INC0010042"), ("required", ""))),
        ),
        (
            "[a90] spinbutton 'Quantity' value=1, valuemin=0, valuemax=10",
            AxNode(
                0,
                "a90",
                "spinbutton",
                "Quantity",
                (("value", "1"), ("valuemin", "0"), ("valuemax", "10")),
            ),
        ),
        (
            "[7] listbox 'Size', multiselectable=False, expanded=True",
            AxNode(0, "7", "listbox", "Size", (("multiselectable", "False"), ("expanded", "True"))),
        ),
        (
            "[8] checkbox 'Agree', checked='false'",
            AxNode(0, "8", "checkbox", "Agree", (("checked", "false"),)),
        ),
        ("StaticText 'Hello'", AxNode(0, None, "StaticText", "Hello")),
        ("LineBreak", AxNode(0, None, "LineBreak", "")),
        ("[97] generic", AxNode(0, "97", "generic", "")),
        ("[12] link ''", AxNode(0, "12", "link", "")),
        (
            "[55] generic, live='polite', atomic",
            AxNode(0, "55", "generic", "", (("live", "polite"), ("atomic", ""))),
        ),
        ('[13] link "Emma\'s \\"pick\\""', AxNode(0, "13", "link", 'Emma\'s "pick"')),
        ("[14] link '\\ue611 My Cart ✓'", AxNode(0, "14", "link", "\ue611 My Cart ✓")),
        (
            "[9] button 'Go', box=\"(10,20,110,60)\", clickable, som",
            AxNode(
                0, "9", "button", "Go", (("box", "(10,20,110,60)"), ("clickable", ""), ("som", ""))
            ),
        ),
        (
            "[1305] combobox 'Search' autocomplete: list hasPopup: listbox required: False",
            AxNode(
                0,
                "1305",
                "combobox",
                "Search",
                (("autocomplete", "list"), ("hasPopup", "listbox"), ("required", "False")),
            ),
        ),
        (
            "[1280] link 'Image' url: http://shop.example/a b.jpg focused: True",
            AxNode(
                0,
                "1280",
                "link",
                "Image",
                (("url", "http://shop.example/a b.jpg"), ("focused", "True")),
            ),
        ),
    ],
)
def test_a_node_line_parses_to_its_bid_role_name_and_properties(line, expected):
    assert axtree_lines(line) == [expected]
    assert axtree_problems(line) == []


def test_nesting_follows_tab_or_space_indentation():
    tabbed = [(n.depth, n.bid) for n in axtree_lines(WORKARENA_FORM)]
    spaced = [(n.depth, n.bid) for n in axtree_lines(WORKARENA_FORM.replace("\t", "  "))]

    assert tabbed == spaced
    assert tabbed[:3] == [(0, None), (1, "47"), (2, "52")]
    assert (3, "a198") in tabbed and (4, "a261") in tabbed


def test_workarena_bids_are_the_ids_an_action_may_use():
    domain = WebDomain()
    world = World(domain="web", title="Incident", initial_observation=WORKARENA_FORM)

    assert {"a", "a198", "a312", "47"} <= domain.ids_in(WORKARENA_FORM)
    assert None not in domain.ids_in(WORKARENA_FORM)
    fill = domain.parse_action("fill('a312', 'Laptop does not boot')", world)
    missing = domain.parse_action("click('a999')", world)
    passed = {
        r.name: r.passed
        for r in run_verifiers("web", WORKARENA_FORM, action=fill, previous=WORKARENA_FORM)
    }
    failed = {
        r.name: r.passed
        for r in run_verifiers("web", WORKARENA_FORM, action=missing, previous=WORKARENA_FORM)
    }
    assert passed["ids_exist"] and not failed["ids_exist"]


PROSE = (
    "The page shows the customer's account. I clicked [227] link 'My Account', and the\n"
    "order history appeared, with the latest order at the top.\n"
)
MARKDOWN = (
    "# My Account\n\n"
    "- [227] link 'My Account'\n"
    "- **Recent orders**: 000000180, $65.32\n\n"
    "| Order | Total |\n|---|---|\n| 000000180 | $65.32 |\n"
)
TREE_WITH_PROSE = WORKARENA_FORM + "\t\t\tThe form then asks for a caller, which is required.\n"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(PROSE, id="prose"),
        pytest.param(MARKDOWN, id="markdown"),
        pytest.param("Hello, world.", id="sentence-with-comma"),
        pytest.param("Note: see below", id="sentence-with-colon"),
        pytest.param(TREE_WITH_PROSE, id="tree-with-a-prose-line"),
    ],
)
def test_prose_and_markdown_are_not_accessibility_trees(text):
    assert axtree_problems(text)
    assert _failures("web", text)


def test_a_tree_with_a_prose_line_is_still_a_tree_whose_check_names_the_line():
    failures = _failures("web", TREE_WITH_PROSE)

    assert observations.detect_format(TREE_WITH_PROSE) == "axtree"
    assert len(failures) == 1
    assert failures[0].startswith("axtree_lines: line 19 is not a `[bid] role 'name'` node")


def test_prose_is_not_detected_as_an_accessibility_tree():
    assert observations.detect_format(PROSE) == "text"
    assert observations.detect_format(MARKDOWN) == "text"
    assert get_domain("web").detect_format(PROSE) is None


def test_a_blank_page_needs_no_bid_but_a_page_of_elements_does():
    # A blank page is the document alone: there is nothing to act on, so no bid is owed.
    assert axtree_problems("RootWebArea '', focused") == []
    stripped = "RootWebArea 'Shop'\n\tlink 'My Account'\n\t\tStaticText 'My Account'"
    assert axtree_problems(stripped) == [
        "no line carries a [bid], so the agent could not act on anything"
    ]
