"""Writing an export: lines of one format, a file or a dataset layout, and its manifest.

Every path streams: records are built a chunk of items at a time and written
(or yielded to the HTTP response) as they come, while a SHA-256 and the counts
are kept, so memory does not grow with the number of rows.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from simulator.formats import hf
from simulator.formats._jsonl import dumps
from simulator.formats.parquet import write_parquet
from studio.core.models import Project
from studio.errors import RejectedInput
from studio.exports.curation import (
    CURATED_FORMATS,
    CuratedItem,
    curated_provenance,
    curated_record,
)
from studio.exports.items import Resolved
from studio.exports.records import (
    EpisodeItem,
    TraceItem,
    awb_rows,
    bundle_record,
    project_awb_lines,
    sft_record,
    trace_awb_rows,
    trace_sft_record,
    trace_trajectory_record,
    trajectory_record,
)
from studio.worlds.models import Scenario

FORMATS = ("awb", "sft", "trajectory", "bundle")
#: Bytes gathered before a chunk goes to the HTTP response.
STREAM_CHUNK = 64 * 1024
MANIFEST_VERSION = 1


def studio_version() -> str:
    try:
        return metadata.version("world-studio")
    except metadata.PackageNotFoundError:  # pragma: no cover  (run from a plain checkout)
        return "0.1.0"


@dataclass
class Counts:
    records: int = 0
    episodes: int = 0
    traces: int = 0
    steps: int = 0
    scenarios: int = 0
    skipped: int = 0


class ExportWriter:
    """Turns resolved collection items into the records of one format, counting as it goes."""

    def __init__(
        self,
        format: str,
        *,
        include_reasoning: bool = False,
        on_item: Callable[[int], None] | None = None,
    ) -> None:
        if format not in FORMATS:
            raise RejectedInput(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
        self.format = format
        self.include_reasoning = include_reasoning
        self.on_item = on_item
        self.counts = Counts()
        #: Where each curated record came from (which annotation, by whom), for the manifest.
        self.provenance: list[dict[str, Any]] = []

    def records(self, resolved: Iterable[tuple[str, Resolved]]) -> Iterator[dict[str, Any]]:
        for done, (_kind, obj) in enumerate(resolved, start=1):
            yield from self._records_of(obj)
            if self.on_item is not None:
                self.on_item(done)

    def lines(self, resolved: Iterable[tuple[str, Resolved]]) -> Iterator[str]:
        for record in self.records(resolved):
            yield dumps(record) + "\n"

    def _records_of(self, obj: Resolved) -> Iterator[dict[str, Any]]:
        counts = self.counts
        if isinstance(obj, EpisodeItem) and self.format != "bundle":
            counts.episodes += 1
            counts.steps += len(obj.steps)
            if self.format == "awb":
                rows = awb_rows(obj)
                counts.records += len(rows)
                yield from rows
            elif self.format == "sft":
                counts.records += 1
                yield sft_record(obj, include_reasoning=self.include_reasoning)
            else:
                counts.records += 1
                yield trajectory_record(obj)
        elif isinstance(obj, TraceItem) and self.format != "bundle":
            counts.traces += 1
            counts.steps += len(obj.turns)
            if self.format == "awb":
                rows = trace_awb_rows(obj.trace, obj.turns)
                counts.records += len(rows)
                yield from rows
            elif self.format == "sft":
                counts.records += 1
                yield trace_sft_record(obj, include_reasoning=self.include_reasoning)
            else:
                counts.records += 1
                yield trace_trajectory_record(obj)
        elif isinstance(obj, CuratedItem) and self.format in CURATED_FORMATS:
            counts.steps += 1
            self.provenance.append(curated_provenance(obj, record=counts.records))
            counts.records += 1
            yield curated_record(obj, self.format, include_reasoning=self.include_reasoning)
        elif isinstance(obj, Scenario) and self.format == "bundle":
            counts.scenarios += 1
            counts.records += 1
            yield bundle_record(obj)
        else:
            counts.skipped += 1


class HashingSink:
    """Counts and hashes bytes on their way somewhere else."""

    def __init__(self) -> None:
        self.sha256 = hashlib.sha256()
        self.bytes = 0

    def feed(self, data: bytes) -> bytes:
        self.sha256.update(data)
        self.bytes += len(data)
        return data

    def entry(self, path: str) -> dict[str, Any]:
        return {"path": path, "bytes": self.bytes, "sha256": self.sha256.hexdigest()}


def manifest(
    *,
    format: str,
    layout: str,
    counts: Counts,
    files: list[dict[str, Any]],
    project: str,
    collection: str,
    filters: list[Any],
    options: dict[str, Any],
    provenance: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The manifest; ``provenance`` (curated records' sources) only when there is some."""
    extra = {"provenance": provenance} if provenance else {}
    return {
        "manifest_version": MANIFEST_VERSION,
        "format": format,
        "layout": layout,
        "project": project,
        "collection": collection,
        "filter": filters,
        "options": options,
        "counts": asdict(counts),
        "files": files,
        "created_at": datetime.now(UTC).isoformat(),
        "studio_version": studio_version(),
        **extra,
    }


def dump_manifest(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def stream_bytes(
    writer: ExportWriter, resolved: Iterable[tuple[str, Resolved]], sink: HashingSink
) -> Iterator[bytes]:
    """The export as byte chunks of about :data:`STREAM_CHUNK`, hashed into ``sink``."""
    buffer: list[bytes] = []
    size = 0
    for line in writer.lines(resolved):
        data = line.encode("utf-8")
        buffer.append(data)
        size += len(data)
        if size >= STREAM_CHUNK:
            yield sink.feed(b"".join(buffer))
            buffer, size = [], 0
    if buffer:
        yield sink.feed(b"".join(buffer))


def write_jsonl(
    writer: ExportWriter, resolved: Iterable[tuple[str, Resolved]], path: Path
) -> dict[str, Any]:
    """Write the export to ``path``; the manifest entry of the file."""
    sink = HashingSink()
    with open(path, "wb") as handle:
        for chunk in stream_bytes(writer, resolved, sink):
            handle.write(chunk)
    return sink.entry(path.name)


def _file_entry(path: Path, name: str) -> dict[str, Any]:
    sink = HashingSink()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            sink.feed(block)
    return sink.entry(name)


def _jsonl_records(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def write_hf_layout(
    writer: ExportWriter,
    resolved: Iterable[tuple[str, Resolved]],
    out: Path,
    *,
    name: str,
    parquet: bool,
) -> list[dict[str, Any]]:
    """A Hugging Face dataset: a deterministic zip when ``out`` ends in .zip, else a folder.

    Returns the manifest entries of the files in the layout (and of the zip itself).
    """
    with tempfile.TemporaryDirectory(dir=out.parent) as scratch:
        folder = out if out.suffix != ".zip" else Path(scratch)
        (folder / "data").mkdir(parents=True, exist_ok=True)
        jsonl = folder / hf.DATA_JSONL
        entries = [{**write_jsonl(writer, resolved, jsonl), "path": hf.DATA_JSONL}]
        if parquet:
            write_parquet(_jsonl_records(jsonl), folder / hf.DATA_PARQUET, writer.format)
            entries.append(_file_entry(folder / hf.DATA_PARQUET, hf.DATA_PARQUET))
        # The card describes the data, not where it came from (episodes or traces), so that
        # a re-export of an imported dataset has the same card.
        c = writer.counts
        counts = (
            {"scenarios": c.scenarios}
            if writer.format == "bundle"
            else {"trajectories": c.episodes + c.traces, "steps": c.steps}
        )
        card = hf.dataset_card(
            hf.CardInfo(
                name=name,
                format=writer.format,
                records=writer.counts.records,
                counts=counts,
                parquet=parquet,
            )
        )
        (folder / hf.CARD).write_text(card, encoding="utf-8")
        entries.append(_file_entry(folder / hf.CARD, hf.CARD))
        if out.suffix == ".zip":
            with zipfile.ZipFile(out, "w") as archive:
                for entry in entries:
                    hf.add_file(archive, entry["path"], folder / entry["path"])
            entries.append(_file_entry(out, out.name))
    return entries


def write_project_awb(*, project: Project, target: Path) -> int:
    """Write the project's traces as AgentWorldBench JSONL (``awb export``); the row count.

    Imported rows are written back byte for byte in their file's order
    (:func:`studio.exports.records.project_awb_lines`), line endings included: only a
    row that ended a file without a newline gets one when another row follows it.
    """
    count = 0
    previous: str | None = None
    with open(target, "w", encoding="utf-8", newline="") as sink:
        for line in project_awb_lines(project):
            if previous is not None:
                sink.write(previous if previous.endswith("\n") else previous + "\n")
            previous = line
            count += 1
        if previous is not None:
            sink.write(previous)
    return count
