from __future__ import annotations

from studio.core.models import ModelEndpoint
from studio.worlds import services
from studio.worlds.models import Scenario

HTMX = {"HTTP_HX_REQUEST": "true"}


def _kinds(scenario):
    scenario.refresh_from_db()
    return [p["kind"] for p in scenario.spec["perturbations"]]


def test_it_creates_a_scenario_pinned_to_the_head_revision(people, world, client):
    client.force_login(people.users["editor"])
    response = client.post("/worlds/scenarios/new/", {"world": world.pk, "title": "Buy a map"})
    scenario = Scenario.objects.get()
    assert response["Location"] == f"/worlds/scenarios/{scenario.pk}/"
    assert scenario.world_revision == world.head and scenario.spec["title"] == "Buy a map"
    assert scenario.spec["schema_version"] == 1


def test_perturbations_are_added_reordered_and_removed_with_htmx(people, scenario, client):
    client.force_login(people.users["editor"])
    base = f"/worlds/scenarios/{scenario.pk}/perturbations"
    fragment = client.post(f"{base}/add", {"kind": "ui_interrupt"}, **HTMX).content.decode()
    assert fragment.startswith('<div id="perturbations"') and "UI interrupt" in fragment
    assert _kinds(scenario) == ["truncation", "ui_interrupt"]

    client.post(f"{base}/1/move", {"direction": "up"}, **HTMX)
    assert _kinds(scenario) == ["ui_interrupt", "truncation"]
    client.post(f"{base}/0/remove", **HTMX)
    assert _kinds(scenario) == ["truncation"]
    assert client.post(f"{base}/5/remove").status_code == 404


def test_the_perturbation_form_comes_from_the_kind_registry_and_validates(people, scenario, client):
    client.force_login(people.users["editor"])
    page = client.get(f"/worlds/scenarios/{scenario.pk}/").content.decode()
    assert 'name="param-max_chars"' in page and 'name="param-marker"' in page
    url = f"/worlds/scenarios/{scenario.pk}/perturbations/0/save"

    bad = client.post(
        url, {"mode": "enforced", "param-max_chars": "lots", "trigger-first_step": "0"}, **HTMX
    ).content.decode()
    assert "not saved" in bad and "must be an integer" in bad
    assert 'value="lots"' in bad  # what was typed is kept

    ok = client.post(
        url,
        {
            "mode": "prompted",
            "param-max_chars": "120",
            "param-marker": "[cut]",
            "trigger-first_step": "2",
            "trigger-action_pattern": "^cat",
        },
        **HTMX,
    ).content.decode()
    assert "saved" in ok
    scenario.refresh_from_db()
    item = scenario.spec["perturbations"][0]
    assert (item["mode"], item["params"]["max_chars"], item["trigger"]["first_step"]) == (
        "prompted",
        120,
        2,
    )


def test_the_prompt_preview_shows_step_one_with_instructions_and_a_token_estimate(
    people, scenario, client
):
    services.scenario_update(
        scenario=scenario,
        changes={
            "task": "Find the atlas of Marrowby.",
            "policy": {"kind": "scripted", "actions": ["click('1')"], "endpoint": ""},
            "perturbations": [
                services.perturbation_defaults("instruction")
                | {"mode": "prompted", "params": {"text": "The shop is closing in five minutes."}},
                services.perturbation_defaults("ui_interrupt"),
                services.perturbation_defaults("latency") | {"trigger": {"first_step": 3}},
            ],
        },
    )
    client.force_login(people.users["viewer"])
    fragment = client.get(f"/worlds/scenarios/{scenario.pk}/prompt", **HTMX).content.decode()

    assert fragment.startswith('<div id="prompt-preview"')
    assert "Find the atlas of Marrowby." in fragment and "Marrowby Books" in fragment
    assert "click(&#x27;1&#x27;)" in fragment and "placeholder" not in fragment
    assert (
        "The shop is closing in five minutes." in fragment
        and "&lt;simulation_control&gt;" in fragment
    )
    assert "#2 UI interrupt" in fragment and "Latency" not in fragment
    assert "tokens" in fragment and "estimate" in fragment


def test_sections_save_and_show_errors_in_place(people, scenario, client):
    client.force_login(people.users["editor"])
    url = f"/worlds/scenarios/{scenario.pk}/save"
    bad = client.post(
        url,
        {
            "section": "success",
            "success-count": "1",
            "success-0-kind": "regex",
            "success-0-pattern": "(",
            "success-0-reward": "1",
        },
        **HTMX,
    ).content.decode()
    assert bad.startswith('<form id="success"') and "invalid regex" in bad
    scenario.refresh_from_db()
    assert scenario.spec["success"] == []

    client.post(
        url,
        {
            "section": "success",
            "success-count": "2",
            "success-0-kind": "regex",
            "success-0-pattern": "Atlas",
            "success-0-reward": "1",
            "success-0-terminate": "on",
            "success-1-kind": "json_path",
            "success-1-path": "$.status",
            "success-1-value": '"sold"',
            "success-1-reward": "0.5",
        },
        **HTMX,
    )
    scenario.refresh_from_db()
    assert [c["kind"] for c in scenario.spec["success"]] == ["regex", "json_path"]
    assert scenario.spec["success"][1]["value"] == "sold"

    checked = client.post(
        f"/worlds/scenarios/{scenario.pk}/validate",
        {"row": "0", "success-0-kind": "regex", "success-0-pattern": "[a"},
    )
    assert (
        checked.content.decode().startswith('<div id="criterion-0"')
        and "invalid regex" in checked.content.decode()
    )


def test_policy_endpoint_and_sampling(people, scenario, client):
    endpoint = ModelEndpoint.objects.create(
        project=people.project, name="sglang-a", kind="openai", base_url="http://x.invalid"
    )
    ModelEndpoint.objects.create(project=people.other, name="secret", kind="openai")
    client.force_login(people.users["editor"])
    page = client.get(f"/worlds/scenarios/{scenario.pk}/").content.decode()
    assert "sglang-a" in page and "secret" not in page

    url = f"/worlds/scenarios/{scenario.pk}/save"
    bad = client.post(
        url, {"section": "policy", "policy-kind": "scripted", "policy-actions": ""}, **HTMX
    ).content.decode()
    assert "needs at least one action" in bad
    client.post(
        url,
        {
            "section": "policy",
            "policy-kind": "llm",
            "policy-endpoint": "sglang-a",
            "endpoint": str(endpoint.pk),
            "sampling-override": "on",
            "sampling-temperature": "0.2",
            "sampling-top_p": "0.9",
            "sampling-top_k": "10",
            "sampling-max_tokens": "512",
            "sampling-seed": "4",
        },
        **HTMX,
    )
    scenario.refresh_from_db()
    assert scenario.endpoint == endpoint and scenario.spec["policy"]["kind"] == "llm"
    assert (
        scenario.spec["sampling"]["temperature"] == 0.2 and scenario.spec["sampling"]["seed"] == 4
    )

    other = ModelEndpoint.objects.get(name="secret")
    response = client.post(
        url, {"section": "policy", "policy-kind": "human", "endpoint": str(other.pk)}, **HTMX
    )
    assert "choose one of the listed endpoints" in response.content.decode()
    scenario.refresh_from_db()
    assert scenario.endpoint == endpoint


def test_the_basics_pin_another_revision_of_the_same_world(people, scenario, client):
    world = scenario.world
    services.world_save(world=world, spec={**world.head.spec, "premise": "new"})
    client.force_login(people.users["editor"])
    client.post(
        f"/worlds/scenarios/{scenario.pk}/save",
        {
            "section": "basics",
            "title": "Renamed",
            "task": "t",
            "max_steps": "9",
            "seed": "3",
            "world_revision": "2",
        },
    )
    scenario.refresh_from_db()
    assert (scenario.title, scenario.world_revision.number, scenario.spec["max_steps"]) == (
        "Renamed",
        2,
        9,
    )


def test_the_prompt_preview_is_in_the_scenario_endpoints_layout(people, scenario, client):
    client.force_login(people.users["viewer"])
    url = f"/worlds/scenarios/{scenario.pk}/prompt"
    # No endpoint: the deployment's default, here the embedded model, in its edit layout.
    embedded = client.get(url, **HTMX).content.decode()
    assert "edit layout" in embedded and "### Turn 1" not in embedded

    scenario.endpoint = ModelEndpoint.objects.create(
        project=people.project,
        name="qwen",
        kind="openai",
        base_url="http://127.0.0.1:9",
        model="Qwen/Qwen-AgentWorld-35B-A3B",
    )
    scenario.save()
    agentworld = client.get(url, **HTMX).content.decode()
    assert "agentworld layout" in agentworld and "### Turn 1\n**Current State:**" in agentworld
