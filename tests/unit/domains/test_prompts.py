"""System prompts: our own wording, the world's definition inside, byte-identical per world."""

from __future__ import annotations

import pytest

from simulator.domains import domain_names, get_domain
from simulator.world import World
from tests.unit.verifiers._fixtures import read

TAG = "<predicted_observation></predicted_observation>"

WORLDS = {
    "mcp": World(
        domain="mcp",
        title="Heronsgate Air",
        premise="A regional airline's booking desk.",
        extras={
            "tools": [
                {
                    "name": "get_user_details",
                    "description": "Look up a passenger.",
                    "input_schema": {
                        "type": "object",
                        "properties": {"user_id": {"type": "string"}},
                        "required": ["user_id"],
                    },
                }
            ],
            "resources": [{"uri": "db://users/ana_9", "text": "Ana Ruiz, gold member"}],
        },
    ),
    "search": World(
        domain="search",
        title="Zorbland",
        premise="A small island nation.",
        extras={"corpus": [{"entity": "Zorb City", "facts": ["capital of Zorbland since 1911"]}]},
    ),
    "terminal": World(
        domain="terminal",
        title="Build box",
        initial_observation="ana@forge:~/ledger$ ",
        extras={
            "hostname": "forge",
            "user": "ana",
            "cwd": "/home/ana/ledger",
            "files": {"/home/ana/ledger/README.md": "# Ledger\n"},
        },
    ),
    "swe": World(
        domain="swe",
        title="calc repo",
        extras={
            "repository": "calc: a tiny calculator",
            "files": [{"path": "/r/calc.py", "content": "x"}],
        },
    ),
    "web": World(
        domain="web",
        title="One Stop Market",
        initial_observation=read("web/webarena_shopping_step1.axtree.txt"),
    ),
    "os": World(
        domain="os", title="Quillpad desk", extras={"screen": {"width": 1920, "height": 1080}}
    ),
    "android": World(
        domain="android",
        title="Phone",
        initial_observation='UI element 0: {"index": 0, "text": "Inbox"}',
    ),
}


def test_every_domain_has_a_world_here():
    # Other tests may register custom domains; the seven built-in ones must all be here.
    builtin = {"mcp", "search", "terminal", "swe", "web", "os", "android"}
    assert set(WORLDS) == builtin
    assert builtin <= set(domain_names())


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_it_builds_a_deterministic_prompt_holding_the_world(name):
    world = WORLDS[name]
    domain = get_domain(name)

    prompt = domain.system_prompt(world)

    assert prompt == domain.system_prompt(World.from_dict(world.to_dict()))
    assert world.title in prompt
    assert world.premise in prompt
    assert world.initial_observation.strip()[:200] in prompt
    assert "fictional" in prompt
    assert TAG in prompt
    assert "# Observation format" in prompt


def test_prompts_carry_each_domains_extras():
    prompts = {name: get_domain(name).system_prompt(world) for name, world in WORLDS.items()}

    assert '"get_user_details"' in prompts["mcp"]
    assert '"required": [\n' in prompts["mcp"]
    assert "Ana Ruiz, gold member" in prompts["mcp"]
    assert "capital of Zorbland since 1911" in prompts["search"]
    assert "`ana@forge:/home/ana/ledger$ `" in prompts["terminal"]
    assert "/home/ana/ledger/README.md" in prompts["terminal"]
    assert "calc: a tiny calculator" in prompts["swe"]
    assert "str_replace_editor" in prompts["swe"]
    assert '"width": 1920' in prompts["os"]
    assert "tag\\tname\\ttext" in prompts["os"]


def test_gui_prompts_ask_for_the_format_of_the_initial_screen():
    web = get_domain("web")
    android = get_domain("android")

    assert "BrowserGym's text form" in web.system_prompt(WORLDS["web"])
    assert "<!DOCTYPE html>" in web.system_prompt(World(domain="web", title="Blank"))
    aria = World(
        domain="web", title="Shop", initial_observation=read("web/saucedemo_products.aria.yaml")
    )
    assert "ARIA snapshot in YAML" in web.system_prompt(aria)
    assert "AndroidWorld's element list" in android.system_prompt(WORLDS["android"])
    assert "uiautomator dump" in android.system_prompt(World(domain="android", title="Phone"))


def test_the_os_prompt_spells_the_table_header_of_the_detector():
    from simulator.observations import OS_TABLE_HEADER

    assert OS_TABLE_HEADER.replace("\t", "\\t") in get_domain("os").system_prompt(WORLDS["os"])


def test_it_omits_empty_sections():
    prompt = get_domain("search").system_prompt(World(domain="search", title="Bare"))

    assert "## Premise" not in prompt
    assert "## Corpus" not in prompt
