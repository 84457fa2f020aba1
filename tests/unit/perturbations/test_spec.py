from __future__ import annotations

import json

import pytest

from simulator.errors import InvalidPerturbation
from simulator.perturbations import (
    PERTURBATION_KINDS,
    Firing,
    Perturbation,
    StepContext,
    Trigger,
    action_tool_name,
    enforce,
    fires,
    firing_indexes,
    prompted_firings,
)


def ctx(step: int = 1, action: str = "ls", domain: str = "terminal", seed: int = 0) -> StepContext:
    return StepContext(step=step, action=action, domain=domain, seed=seed)


def test_it_round_trips_a_perturbation_through_dicts():
    data = {
        "kind": "truncation",
        "mode": "enforced",
        "params": {"max_chars": 10},
        "trigger": {
            "first_step": 2,
            "last_step": 5,
            "action_pattern": "cat",
            "tool": None,
            "probability": 0.5,
            "seed": 3,
        },
        "label": "short reads",
    }
    p = Perturbation.from_dict(data)
    assert p.to_dict() == data
    assert Perturbation.from_dict(json.loads(json.dumps(p.to_dict()))) == p


def test_it_lists_every_problem_of_an_invalid_spec():
    with pytest.raises(InvalidPerturbation) as err:
        Perturbation.from_dict(
            {
                "kind": "instruction",
                "mode": "enforced",
                "params": {"text": 3, "bogus": 1},
                "trigger": {"first_step": 0, "probability": 2, "action_pattern": "("},
                "extra": True,
            }
        )
    message = str(err.value)
    for fragment in (
        "instruction supports only prompted",
        "params.bogus: unknown parameter",
        "params.text: must be str",
        "trigger.first_step",
        "trigger.probability",
        "trigger.action_pattern: invalid regex",
        "unknown keys ['extra']",
    ):
        assert fragment in message


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"kind": "nope"}, "unknown kind 'nope'"),
        ({"kind": "truncation", "mode": "sometimes"}, "mode: must be"),
        ({"kind": "truncation", "params": []}, "params: must be an object"),
        ({"kind": "truncation", "label": 1}, "label: must be text"),
        ({"kind": "truncation", "trigger": []}, "trigger: must be an object"),
        (
            {"kind": "truncation", "trigger": {"first_step": 4, "last_step": 2}},
            "must not be before",
        ),
        ({"kind": "truncation", "trigger": {"last_step": "x"}}, "trigger.last_step"),
        ({"kind": "truncation", "trigger": {"tool": 5}}, "trigger.tool"),
        (
            {"kind": "truncation", "trigger": {"action_pattern": 5}},
            "trigger.action_pattern: must be text",
        ),
        ({"kind": "truncation", "trigger": {"seed": "x"}}, "trigger.seed"),
        ({"kind": "truncation", "trigger": {"bad": 1}}, "trigger: unknown keys"),
        ({"kind": "ui_interrupt", "params": {"style": "popup"}}, "must be one of"),
        ("not a dict", "must be an object"),
    ],
)
def test_it_rejects_invalid_specs(data, fragment):
    with pytest.raises(InvalidPerturbation, match=fragment):
        Perturbation.from_dict(data)


def test_trigger_from_dict_validates():
    with pytest.raises(InvalidPerturbation):
        Trigger.from_dict({"probability": -1})
    assert Trigger.from_dict({"last_step": 3}).last_step == 3


def test_step_range_is_inclusive_and_may_be_open_ended():
    p = Perturbation("instruction", trigger=Trigger(first_step=2, last_step=3))
    assert [fires(p, 0, ctx(step=s)) for s in range(1, 6)] == [False, True, True, False, False]
    open_ended = Perturbation("instruction", trigger=Trigger(first_step=4))
    assert [fires(open_ended, 0, ctx(step=s)) for s in (3, 4, 100)] == [False, True, True]


def test_action_pattern_and_tool_filter_firings():
    by_pattern = Perturbation("instruction", trigger=Trigger(action_pattern=r"^cat "))
    assert fires(by_pattern, 0, ctx(action="cat a.txt"))
    assert not fires(by_pattern, 0, ctx(action="ls"))
    by_tool = Perturbation("instruction", trigger=Trigger(tool="search_flights"))
    assert fires(by_tool, 0, ctx(action='{"name": "search_flights", "arguments": {}}'))
    assert not fires(by_tool, 0, ctx(action='{"name": "book", "arguments": {}}'))


@pytest.mark.parametrize(
    ("action", "tool"),
    [
        ('{"name": "get_user", "arguments": {}}', "get_user"),
        ('{"tool": "search", "query": "x"}', "search"),
        ("search(query='cats')", "search"),
        ("{not json", None),
        ("ls -la", None),
        ("[1, 2]", None),
    ],
)
def test_action_tool_name(action, tool):
    assert action_tool_name(action) == tool


def pattern(seed: int, probability: float = 0.5, index: int = 0) -> list[bool]:
    p = Perturbation("instruction", trigger=Trigger(probability=probability))
    return [fires(p, index, ctx(step=s, seed=seed)) for s in range(1, 41)]


def test_same_seed_same_firings_and_different_seed_different_pattern():
    assert pattern(11) == pattern(11)
    assert pattern(11) != pattern(12)
    assert 5 < sum(pattern(11)) < 35  # probability 0.5 really draws


def test_firings_of_one_perturbation_ignore_the_others():
    alone = [Perturbation("instruction", trigger=Trigger(probability=0.5))]
    crowded = [*alone, Perturbation("truncation", trigger=Trigger(probability=0.5))]
    for s in range(1, 30):
        c = ctx(step=s, seed=5)
        assert (0 in firing_indexes(alone, c)) == (0 in firing_indexes(crowded, c))


def test_probability_bounds():
    assert not any(pattern(1, probability=0.0))
    assert all(pattern(1, probability=1.0))


def test_firing_round_trips_and_rejects_garbage():
    f = Firing(2, "truncation", "enforced", "cut", {"chars_before": 9}, changed=False)
    assert Firing.from_dict(f.to_dict()) == f
    with pytest.raises(InvalidPerturbation):
        Firing.from_dict({"kind": "x"})


def test_registry_describes_every_kind_for_forms():
    expected = {
        "error_injection",
        "hidden_answer",
        "pagination",
        "truncation",
        "latency",
        "rate_limit",
        "schema_drift",
        "stale_data",
        "distractor",
        "ui_interrupt",
        "instruction",
    }
    assert set(PERTURBATION_KINDS) == expected
    for name, info in PERTURBATION_KINDS.items():
        described = json.loads(json.dumps(info.to_dict()))
        assert described["name"] == name and described["title"] and described["description"]
        assert "prompted" in described["modes"]
        for param in described["params"]:
            assert {"name", "type", "default", "help"} <= set(param)
            assert info.param_problems({param["name"]: param["default"]}) == []
    assert PERTURBATION_KINDS["instruction"].modes == ("prompted",)
    assert PERTURBATION_KINDS["truncation"].modes == ("prompted", "enforced")
    with pytest.raises(KeyError):
        PERTURBATION_KINDS["truncation"].default("nope")


def test_prompted_and_enforced_split():
    ps = [
        Perturbation("instruction", "prompted", {"text": "say hi"}),
        Perturbation("truncation", "enforced", {"max_chars": 3}),
    ]
    c = ctx()
    idx = firing_indexes(ps, c)
    prompted = prompted_firings(ps, idx, c)
    assert [f.details["instruction"] for f in prompted] == ["say hi"]
    observation, enforced = enforce(ps, idx, "abcdef", c)
    assert observation == "abc\n[... 3 characters truncated ...]"
    assert [f.kind for f in enforced] == ["truncation"]
