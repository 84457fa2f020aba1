from __future__ import annotations


def test_it_serialises_exactly_as_the_simulator_formats_do():
    from simulator.formats._jsonl import dumps as reference
    from studio.exports.writing import dumps

    value = {"a": "x\u2028y\u2029z\x85 ✓ \x1b[0m <b>", "n": [1, 2.5, None, True]}

    assert dumps(value) == reference(value)
