from __future__ import annotations

import json

import pytest

from simulator.scenario import (
    AgentPolicy,
    Scenario,
    ScenarioError,
    SuccessCriterion,
    evaluate_success,
    json_path_value,
    policy_problems,
)


def test_regex_success_rewards_and_terminates():
    outcome = evaluate_success(
        (SuccessCriterion("regex", pattern=r"KEY-\d+"),), "found KEY-42 here"
    )
    assert (outcome.reward, outcome.terminated) == (1.0, True) and "KEY" in outcome.reason


def test_json_path_success_compares_values():
    criteria = (
        SuccessCriterion("judge", description="ignored here"),
        SuccessCriterion(
            "json_path", path="$.booking.legs[1].to", value="SEA", reward=0.5, terminate=False
        ),
    )
    observation = json.dumps({"booking": {"legs": [{"to": "ORD"}, {"to": "SEA"}]}})
    outcome = evaluate_success(criteria, observation)
    assert (outcome.reward, outcome.terminated) == (0.5, False)
    assert outcome.reason == '$.booking.legs[1].to == "SEA"'


@pytest.mark.parametrize(
    "observation", ["not json", '{"booking": {}}', '{"booking": {"legs": [1]}}', "null"]
)
def test_no_success_when_nothing_matches(observation):
    criteria = (
        SuccessCriterion("json_path", path="booking.legs.1.to", value="SEA"),
        SuccessCriterion("regex", pattern="zzz"),
    )
    outcome = evaluate_success(criteria, observation)
    assert (outcome.reward, outcome.terminated) == (0.0, False)


def test_json_path_value_forms():
    data = {"a": [{"b": 1}, {"b": 2}]}
    assert json_path_value(data, "a.1.b") == 2
    assert json_path_value(data, "$.a[-1].b") == 2
    assert json_path_value(data, "$") == data


def test_scenario_round_trips_and_validates():
    scenario = Scenario(title="t", policy=AgentPolicy("llm", endpoint="sglang-main"))
    assert Scenario.from_dict(json.loads(json.dumps(scenario.to_dict()))) == scenario
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict({"title": " ", "schema_version": 9})
    assert err.value.problems == [
        "scenario.schema_version: unsupported version 9",
        "scenario.title: required text",
    ]


@pytest.mark.parametrize(
    ("policy", "fragment"),
    [
        ([], "must be an object"),
        ({"kind": "robot"}, "policy.kind"),
        ({"actions": "ls"}, "policy.actions: must be a list"),
        ({"kind": "llm"}, "needs an endpoint"),
        ({"endpoint": 3}, "policy.endpoint: must be text"),
    ],
)
def test_policy_problems(policy, fragment):
    assert any(fragment in p for p in policy_problems(policy))


def test_scenario_problems_for_non_lists():
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict({"title": "x", "perturbations": {}, "success": {}})
    assert "scenario.perturbations: must be a list" in err.value.problems
    assert "scenario.success: must be a list" in err.value.problems
    with pytest.raises(ScenarioError, match="must be an object"):
        Scenario.from_dict([])  # type: ignore[arg-type]
