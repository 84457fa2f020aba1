from __future__ import annotations

import json

from simulator.formats._jsonl import dumps


def test_it_keeps_text_readable_and_escapes_only_the_line_separators():
    value = {"a": "x\u2028y\u2029z\x85 ✓ \x1b[0m <b>", "n": [1, 2.5, None, True]}

    line = dumps(value)

    assert line == ('{"a": "x\\u2028y\\u2029z\\u0085 ✓ \\u001b[0m <b>", "n": [1, 2.5, null, true]}')
    assert line.splitlines() == [line]
    assert json.loads(line) == value
