"""Parquet copies of JSONL exports, with a fixed schema per format (needs ``pyarrow``).

Plain fields keep their type (text, integers, lists of text, SFT messages);
nested objects (``json`` in :data:`simulator.formats.hf.FIELDS`) are stored as
JSON text, and AgentWorldBench keys beyond the required ones (``gen``, scores,
judge fields) go into one ``extra`` JSON column. :func:`iter_parquet` rebuilds
each record exactly as the JSONL file has it, so the two files are
interchangeable. Rows are written in batches: memory stays flat however many
records there are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from simulator.formats.hf import FIELDS

BATCH = 1000
EXTRA = "extra"


def _arrow_type(dtype: str) -> Any:
    if dtype in ("string", "json"):
        return pa.string()
    if dtype == "int64":
        return pa.int64()
    if dtype == "list[string]":
        return pa.list_(pa.string())
    return pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))


def schema(format: str) -> Any:
    """The Arrow schema of a format's Parquet file."""
    fields = [pa.field(name, _arrow_type(dtype)) for name, dtype in FIELDS[format]]
    if format == "awb":
        fields.append(pa.field(EXTRA, pa.string()))
    return pa.schema(fields)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _to_row(format: str, record: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for name, dtype in FIELDS[format]:
        value = record.get(name)
        row[name] = _dumps(value) if dtype == "json" else value
    if format == "awb":
        known = {name for name, _ in FIELDS[format]}
        extra = {k: v for k, v in record.items() if k not in known}
        row[EXTRA] = _dumps(extra) if extra else None
    return row


def _from_row(format: str, row: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for name, dtype in FIELDS[format]:
        value = row[name]
        if dtype == "json":
            record[name] = json.loads(value)
        elif format == "sft" and name == "reasoning" and value is None:
            continue  # written without reasoning
        else:
            record[name] = value
    if format == "awb" and row.get(EXTRA):
        record.update(json.loads(row[EXTRA]))
    return record


def write_parquet(records: Iterable[dict[str, Any]], path: str | Path, format: str) -> int:
    """Write records (dicts as in the JSONL file) to ``path``; returns how many."""
    arrow_schema = schema(format)
    count = 0
    with pq.ParquetWriter(str(path), arrow_schema, compression="zstd") as writer:
        batch: list[dict[str, Any]] = []
        for record in records:
            batch.append(_to_row(format, record))
            count += 1
            if len(batch) >= BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=arrow_schema))
                batch = []
        if batch or count == 0:
            writer.write_table(pa.Table.from_pylist(batch, schema=arrow_schema))
    return count


def iter_parquet(path: str | Path, format: str) -> Iterator[dict[str, Any]]:
    """The records of a Parquet file written by :func:`write_parquet`, batch by batch."""
    source = pq.ParquetFile(str(path))
    for batch in source.iter_batches(batch_size=BATCH):
        for row in batch.to_pylist():
            yield _from_row(format, row)
