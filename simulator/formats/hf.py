"""A Hugging Face datasets layout, written without the ``datasets`` package.

The layout is a folder (or a zip of one) that ``datasets.load_dataset`` reads as
is: ``data/train.jsonl`` (and optionally ``data/train.parquet``) plus a
``README.md`` dataset card whose YAML front matter declares the files, the
features and the number of examples. Zips are deterministic (fixed timestamps
and permissions), so the same data always makes the same bytes.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

#: Every entry gets this timestamp, so a zip's bytes depend on its content only.
ZIP_TIMESTAMP = (1980, 1, 1, 0, 0, 0)
DATA_JSONL = "data/train.jsonl"
DATA_PARQUET = "data/train.parquet"
CARD = "README.md"

#: Top-level fields of each format, as (name, Hugging Face dtype); "json" is nested JSON.
FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "awb": (
        ("task", "string"),
        ("id", "json"),
        ("prompt", "list[string]"),
        ("response", "list[string]"),
        ("current_prompt", "string"),
        ("system_str", "string"),
        ("turn_idx", "int64"),
        ("total_turns", "int64"),
    ),
    "sft": (("messages", "list[{role: string, content: string}]"), ("reasoning", "list[string]")),
    "trajectory": (
        ("trajectory_version", "int64"),
        ("world", "json"),
        ("scenario", "json"),
        ("task", "string"),
        ("seed", "int64"),
        ("steps", "json"),
        ("metadata", "json"),
    ),
    "bundle": (("bundle_version", "int64"), ("world", "json"), ("scenario", "json")),
}
DESCRIPTIONS = {
    "awb": "AgentWorldBench rows (one per turn), ready for Qwen-AgentWorld's eval.py.",
    "sft": "Chat SFT conversations (`messages`) for fine-tuning a world model.",
    "trajectory": "Episodes with every step, perturbation firing, verifier result and metadata.",
    "bundle": "Scenario bundles: a world and a scenario (task, perturbations, success criteria).",
}
LICENCE_NOTE = (
    "The licence is not set by the studio: the project that exported this data decides it. "
    "Observations are simulated by a language world model and may be wrong or unsafe; "
    "they are untrusted text."
)


@dataclass(frozen=True)
class CardInfo:
    """What a dataset card says about its data."""

    name: str
    format: str
    records: int
    counts: Mapping[str, int]
    parquet: bool = False
    licence: str = "other"


def _yaml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def _feature_yaml(name: str, dtype: str) -> list[str]:
    if dtype == "json":
        return [f"  - name: {name}", "    dtype: string"]
    if dtype == "list[string]":
        return [f"  - name: {name}", "    sequence: string"]
    if dtype.startswith("list[{"):
        return [
            f"  - name: {name}",
            "    list:",
            "    - name: role",
            "      dtype: string",
            "    - name: content",
            "      dtype: string",
        ]
    return [f"  - name: {name}", f"    dtype: {dtype}"]


def dataset_card(info: CardInfo) -> str:
    """README.md: YAML front matter (configs, features, counts, licence) and a short body."""
    files = [DATA_PARQUET] if info.parquet else [DATA_JSONL]
    lines = [
        "---",
        f"license: {info.licence}",
        f"pretty_name: {_yaml_str(info.name)}",
        "tags:",
        "- agents",
        "- world-model",
        "- simulation",
        "- world-studio",
        f"- {info.format}",
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: train",
        f"    path: {files[0]}",
        "dataset_info:",
        "  features:",
    ]
    for name, dtype in FIELDS[info.format]:
        lines += _feature_yaml(name, dtype)
    lines += [
        "  splits:",
        "  - name: train",
        f"    num_examples: {info.records}",
        "---",
        "",
        f"# {info.name}",
        "",
        DESCRIPTIONS[info.format],
        "",
        "## Counts",
        "",
        f"- records: {info.records}",
    ]
    lines += [f"- {key}: {value}" for key, value in info.counts.items()]
    lines += ["", "## Fields", ""]
    lines += [f"- `{name}` ({dtype})" for name, dtype in FIELDS[info.format]]
    lines += [
        "",
        "Fields typed `json` hold nested JSON objects in the JSONL file and JSON text in Parquet.",
        "",
        "## Files",
        "",
        f"- `{DATA_JSONL}`: one JSON record per line (UTF-8).",
    ]
    if info.parquet:
        lines.append(f"- `{DATA_PARQUET}`: the same records as Parquet.")
    lines += ["", "## Licence", "", LICENCE_NOTE, ""]
    return "\n".join(lines)


def zip_info(name: str) -> zipfile.ZipInfo:
    """An entry header with a fixed timestamp and mode, compressed."""
    info = zipfile.ZipInfo(name, date_time=ZIP_TIMESTAMP)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def open_entry(archive: zipfile.ZipFile, name: str) -> IO[bytes]:
    """A writable stream for one entry (large entries are fine: zip64 is on)."""
    return archive.open(zip_info(name), "w", force_zip64=True)


def add_file(archive: zipfile.ZipFile, name: str, path: Path, *, chunk: int = 1 << 20) -> None:
    with open(path, "rb") as source, open_entry(archive, name) as target:
        while block := source.read(chunk):
            target.write(block)


def is_layout(path: Path) -> bool:
    """Whether ``path`` is a dataset folder or zip this module writes."""
    if path.is_dir():
        return (path / DATA_JSONL).is_file()
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return DATA_JSONL in archive.namelist()
    return False


def iter_layout_lines(path: Path) -> Iterator[str]:
    """The lines of the layout's JSONL data file (read from the zip without extracting it)."""
    if path.is_dir():
        with open(path / DATA_JSONL, encoding="utf-8", newline="") as handle:
            yield from handle
        return
    with zipfile.ZipFile(path) as archive, archive.open(DATA_JSONL) as raw:
        yield from io.TextIOWrapper(raw, encoding="utf-8", newline="")


def front_matter(card: str) -> dict[str, str]:
    """Top-level ``key: value`` scalars of a card's YAML front matter (enough to check it)."""
    lines = card.splitlines()
    if not lines or lines[0] != "---":
        return {}
    result: dict[str, str] = {}
    for line in lines[1:]:
        if line == "---":
            break
        if line and not line.startswith((" ", "-")) and ":" in line:
            key, _, value = line.partition(":")
            result[key.strip()] = value.strip()
    return result


def read_card(path: Path) -> str:
    """The layout's README.md ("" when there is none)."""
    if path.is_dir():
        card = path / CARD
        return card.read_text(encoding="utf-8") if card.is_file() else ""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            if CARD in archive.namelist():
                return archive.read(CARD).decode("utf-8")
    return ""


def dataset_name(path: Path) -> str:
    """The ``pretty_name`` of a layout's card ("" when ``path`` is not a layout)."""
    if not is_layout(path):
        return ""
    value = front_matter(read_card(path)).get("pretty_name", "")
    try:
        name = json.loads(value)
    except ValueError:
        return value
    return name if isinstance(name, str) else ""
