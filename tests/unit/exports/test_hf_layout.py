from __future__ import annotations

import zipfile
from typing import Any

from simulator.formats import hf
from simulator.formats.parquet import iter_parquet, write_parquet


def test_it_writes_a_card_with_front_matter_counts_and_features():
    card = hf.dataset_card(
        hf.CardInfo(name='Hard "cases" ✓', format="awb", records=12, counts={"steps": 12})
    )

    meta = hf.front_matter(card)
    assert meta["license"] == "other"
    assert meta["pretty_name"] == '"Hard \\"cases\\" ✓"'
    assert "    num_examples: 12" in card
    assert "  - name: turn_idx\n    dtype: int64" in card
    assert "path: data/train.jsonl" in card
    assert "## Licence" in card


def test_it_makes_zips_whose_bytes_depend_on_content_only(tmp_path):
    def build(path):
        with zipfile.ZipFile(path, "w") as archive, hf.open_entry(archive, hf.DATA_JSONL) as entry:
            entry.write(b'{"a": 1}\n')
        return path.read_bytes()

    assert build(tmp_path / "a.zip") == build(tmp_path / "b.zip")
    assert hf.is_layout(tmp_path / "a.zip")
    assert list(hf.iter_layout_lines(tmp_path / "a.zip")) == ['{"a": 1}\n']


def test_it_round_trips_records_through_parquet(tmp_path):
    rows = [
        {
            "task": "agentworld/mcp",
            "id": 7,
            "prompt": ["p ✓"],
            "response": ["r"],
            "current_prompt": "p",
            "system_str": "s",
            "turn_idx": 1,
            "total_turns": 1,
            "gen": "g",
            "total_score": 4.5,
        },
        {
            "task": "agentworld/web",
            "id": "x-1",
            "prompt": ["\x1b[31m"],
            "response": [""],
            "current_prompt": "",
            "system_str": "",
            "turn_idx": 1,
            "total_turns": 1,
        },
    ]
    path = tmp_path / "rows.parquet"

    assert write_parquet(iter(rows), path, "awb") == 2
    assert list(iter_parquet(path, "awb")) == rows


def test_it_keeps_sft_records_with_and_without_reasoning(tmp_path):
    rows: list[dict[str, Any]] = [
        {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]},
        {"messages": [{"role": "user", "content": "u"}], "reasoning": ["why"]},
    ]
    path = tmp_path / "sft.parquet"

    write_parquet(rows, path, "sft")

    assert list(iter_parquet(path, "sft")) == rows
