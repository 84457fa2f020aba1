"""Recorded files into traces: AgentWorldBench rows (kept as read) and trajectory records.

This is the trace side of the import service (:mod:`studio.exports.importing`,
behind ``awb import``, ``import_data`` and the import page) and what the Traces
page's upload task runs. Files are streamed, never held whole, so memory stays
flat whatever their size.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone

from simulator.errors import FormatError
from simulator.formats.awb import AwbRow, id_key, iter_awb, trajectory_of
from simulator.formats.sniff import TRAJECTORY, record_format
from simulator.formats.trajectory import EpisodeRecord, iter_trajectories
from studio.core.models import Project
from studio.errors import TooLarge
from studio.lib.channels import send_to_group
from studio.traces.models import (
    ImportJob,
    ImportStatus,
    Trace,
    TraceRow,
    TraceSource,
    TraceTurn,
)

MAX_STORED_ERRORS = 200
PROGRESS_EVERY_S = 0.25

Progress = Callable[[ImportJob], None]
Fields = tuple[dict[str, Any], list[dict[str, str]]]


class ImportTooLarge(TooLarge):
    """The file is over ``STUDIO_MAX_UPLOAD_BYTES``; nothing was read."""


def detect_source(path: Path) -> str:
    """``trajectory`` when the first record is a trajectory record, else ``awb``."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.strip():
                try:
                    first = json.loads(line)
                except ValueError:
                    return TraceSource.AWB
                if record_format(first) == TRAJECTORY:
                    return TraceSource.TRAJECTORY
                return TraceSource.AWB
    return TraceSource.AWB


def _count_lines(path: Path) -> int:
    count = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            count += chunk.count(b"\n")
    return count + (1 if path.stat().st_size and not _ends_with_newline(path) else 0)


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, 2)
        return handle.read(1) == b"\n"


def content_hash(
    domain: str,
    system_prompt: str,
    turns: list[tuple[str, str, str]],
    initial: str,
    identity: str = "",
) -> str:
    """Identity of a trace's content: the same file imported twice makes one trace.

    ``identity`` is what the record itself names it by (an AgentWorldBench
    ``task`` and ``id``): two benchmark rows with equal turns but different ids
    are two records, and each must come back out of an export.
    """
    canonical = json.dumps(
        {
            "domain": domain,
            "system": system_prompt,
            "initial": initial,
            "turns": turns,
            "identity": identity,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _check_size(path: Path, filename: str) -> int:
    size = path.stat().st_size
    if size > settings.STUDIO_MAX_UPLOAD_BYTES:
        raise ImportTooLarge(
            f"{filename} is {size} bytes; the limit is {settings.STUDIO_MAX_UPLOAD_BYTES}"
        )
    return size


def import_job_create(
    *,
    project: Project,
    path: Path,
    filename: str,
    user: Any = None,
    partial: bool = False,
) -> ImportJob:
    """A pending import of a file already on disk; refuses files over the size limit."""
    size = _check_size(path, filename)
    return ImportJob.objects.create(
        project=project,
        created_by=user,
        filename=filename[:255],
        path=str(path),
        size=size,
        partial=partial,
    )


class _Reporter:
    """Saves and publishes an import's progress at most every PROGRESS_EVERY_S."""

    def __init__(self, job: ImportJob, publish: Progress | None) -> None:
        self.job, self.publish, self.last = job, publish, 0.0

    def __call__(self, done: int, *, force: bool = False) -> None:
        self.job.lines_done = min(done, self.job.lines_total)
        now = time.monotonic()
        if force or now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            self.job.save(update_fields=["lines_done", "status", "message"])
            if self.publish is not None:
                self.publish(self.job)


def trace_fields(row: AwbRow) -> Fields:
    """The fields of the trace a trajectory's latest row becomes, and its turns."""
    trajectory = trajectory_of(row)
    turns = [
        {"action": turn.action, "observation": turn.observation, "prompt_text": text}
        for turn, text in zip(trajectory.turns, trajectory.prompt_texts, strict=True)
    ]
    fields = {
        "domain": trajectory.domain,
        "source": TraceSource.AWB,
        "task": trajectory.task,
        "external_id": id_key(trajectory.id),
        "title": f"{trajectory.task} #{trajectory.id}",
        "system_prompt": trajectory.system_str,
        "metadata": {
            "initial_state": trajectory.initial_state or "",
            "agent_task": trajectory.agent_task or "",
            "instruction": trajectory.instruction,
            "total_turns": trajectory.total_turns,
        },
    }
    return fields, turns


def _awb_check(path: Path, report: _Reporter) -> tuple[list[dict[str, Any]], set[int]]:
    """Pass 1: every problem, and the line of each trajectory's last turn."""
    errors: list[dict[str, Any]] = []
    latest: dict[tuple[str, str], tuple[int, int]] = {}
    for item in iter_awb(path):
        if isinstance(item, FormatError):
            errors.append({"line": item.line, "field": item.field or "", "reason": item.reason})
            report(item.line or 0)
            continue
        key = item.trajectory_key
        if key not in latest or item.turn_idx > latest[key][0]:
            latest[key] = (item.turn_idx, item.line or 0)
        report(item.line or 0)
    return errors, {line for _, line in latest.values()}


def _trajectory_trace_fields(record: EpisodeRecord) -> Fields:
    world = record.world
    meta = dict(record.metadata)
    fields = {
        "domain": world.domain,
        "source": TraceSource.TRAJECTORY,
        "task": record.task or world.title,
        "external_id": str(meta.get("episode_id", meta.get("id", ""))),
        "title": str(meta.get("title") or world.title)[:200],
        "system_prompt": "",
        "metadata": {
            "initial_state": world.initial_observation,
            "world": world.to_dict(),
            "task": record.task,
            "seed": record.seed,
            "original": meta,
        },
    }
    turns = [
        {"action": s.action, "observation": s.observation, "prompt_text": ""} for s in record.steps
    ]
    return fields, turns


def _store_rows(path: Path, created: dict[tuple[str, str], Trace], skip: set[int]) -> None:
    """Keep every row of the traces this import created, as read (pass 3, batched)."""
    batch: list[TraceRow] = []
    for item in iter_awb(path):
        if isinstance(item, FormatError) or item.line in skip:
            continue
        trace = created.get(item.trajectory_key)
        if trace is not None:
            batch.append(
                TraceRow(
                    trace=trace,
                    turn_idx=item.turn_idx,
                    position=item.line or 0,
                    text=item.text if item.text is not None else item.dumps() + "\n",
                )
            )
        if len(batch) >= 500:
            TraceRow.objects.bulk_create(batch)
            batch = []
    TraceRow.objects.bulk_create(batch)


def trace_get_or_create(
    project: Project, job: ImportJob | None, fields: dict[str, Any], turns: list[dict[str, str]]
) -> tuple[Trace, bool]:
    """The project's trace with this content, created (with its turns) when there is none."""
    digest = content_hash(
        fields["domain"],
        fields["system_prompt"],
        [(t["prompt_text"], t["action"], t["observation"]) for t in turns],
        fields["metadata"].get("initial_state", ""),
        f"{fields['task']}#{fields['external_id']}" if fields["source"] == TraceSource.AWB else "",
    )
    existing = Trace.objects.filter(project=project, content_hash=digest).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            trace = Trace.objects.create(
                project=project, content_hash=digest, import_job=job, **fields
            )
            TraceTurn.objects.bulk_create(
                TraceTurn(trace=trace, index=i, **turn) for i, turn in enumerate(turns, start=1)
            )
    except IntegrityError:  # imported by a concurrent job meanwhile
        return Trace.objects.get(project=project, content_hash=digest), False
    return trace, True


def record_trace_get_or_create(*, project: Project, record: EpisodeRecord) -> tuple[Trace, bool]:
    """``record`` as the trace a trajectory import makes of it, without a file or job.

    For recordings the studio reads itself (the Sandbox's samples): the same
    fields, turns and content hash, so a second call finds the first's trace.
    """
    fields, turns = _trajectory_trace_fields(record)
    return trace_get_or_create(project, None, fields, turns)


def _claim(job_id: int) -> ImportJob | None:
    """pending -> running in one conditional UPDATE; None when another run has it."""
    claimed = ImportJob.objects.filter(pk=job_id, status=ImportStatus.PENDING).update(
        status=ImportStatus.RUNNING
    )
    return ImportJob.objects.get(pk=job_id) if claimed else None


def import_run(*, job_id: int, publish: Progress | None = None) -> ImportJob:
    """Check the whole file, then import it (or its valid lines when ``partial``).

    Idempotent: a job another run has claimed is returned as it stands.
    """
    job = _claim(job_id)
    if job is None:
        return ImportJob.objects.get(pk=job_id)
    _import(job, publish)
    return job


def _import(job: ImportJob, publish: Progress | None) -> list[Trace]:
    """The traces of a claimed job's file, in file order (new ones and those already there).

    Two streaming passes, so memory stays constant whatever the file's size:
    the first collects every problem and, for AgentWorldBench files, the line of
    each trajectory's last turn (which holds all earlier turns); the second
    imports. With any problem and ``partial`` off, nothing is imported.
    """
    path = Path(job.path)
    report = _Reporter(job, publish)
    traces: list[Trace] = []
    try:
        job.source = detect_source(path)
        job.lines_total = _count_lines(path)
        job.message = "Checking every line"
        job.save(update_fields=["source", "lines_total", "message"])
        report(0, force=True)
        if job.source == TraceSource.AWB:
            errors, chosen = _awb_check(path, report)
        else:
            errors = [
                {"line": e.line, "field": e.field or "", "reason": e.reason}
                for e in iter_trajectories(path)
                if isinstance(e, FormatError)
            ]
            chosen = set()
        job.errors = errors[:MAX_STORED_ERRORS]
        if errors and not job.partial:
            job.status = ImportStatus.FAILED
            job.message = (
                f"{len(errors)} problem(s) in {len({e['line'] for e in errors})} line(s); "
                "nothing was imported. Fix them and import again, or import only the valid lines."
            )
            return []
        job.message = "Importing"
        report(0, force=True)
        records: Iterator[Any] = (
            iter_awb(path) if job.source == TraceSource.AWB else iter_trajectories(path)
        )
        bad_lines = {e["line"] for e in errors}
        created: dict[tuple[str, str], Trace] = {}
        for number, item in enumerate(records, start=1):
            if isinstance(item, FormatError):
                continue
            if isinstance(item, AwbRow):
                report(item.line or 0)
                if item.line not in chosen or item.line in bad_lines:
                    continue
                fields, turns = trace_fields(item)
            else:
                report(number)
                fields, turns = _trajectory_trace_fields(item)
            trace, is_new = trace_get_or_create(job.project, job, fields, turns)
            traces.append(trace)
            if not is_new:
                job.duplicates += 1
                continue
            job.traces_created += 1
            if isinstance(item, AwbRow):
                created[item.trajectory_key] = trace
        if created:
            _store_rows(path, created, bad_lines)
        job.status = ImportStatus.DONE
        skipped = f", {len(bad_lines)} bad line(s) skipped" if errors else ""
        job.message = f"Imported {job.traces_created} trace(s); {job.duplicates} duplicate(s) skipped{skipped}."
        job.lines_done = job.lines_total
        return traces
    except (OSError, UnicodeDecodeError) as exc:
        job.status = ImportStatus.FAILED
        job.message = f"Could not read the file: {exc}"
        return []
    finally:
        job.finished_at = timezone.now()
        job.save()
        path.unlink(missing_ok=True)
        if publish is not None:
            publish(job)


def import_traces(
    *,
    project: Project,
    path: Path,
    filename: str = "",
    user: Any = None,
    partial: bool = False,
) -> tuple[ImportJob, list[Trace]]:
    """Import a file synchronously: its job and its traces (the file is copied, so it stays)."""
    filename = filename or Path(path).name
    _check_size(Path(path), filename)
    upload_dir = settings.VAR_DIR / "uploads"
    upload_dir.mkdir(parents=True, exist_ok=True)
    copy = upload_dir / f"cli-{time.time_ns()}.jsonl"
    shutil.copyfile(path, copy)
    job = import_job_create(
        project=project, path=copy, filename=filename, user=user, partial=partial
    )
    claimed = _claim(job.pk)
    assert claimed is not None  # created just above: no other run knows it
    return claimed, _import(claimed, None)


def import_file(
    *, project: Project, path: Path, user: Any = None, partial: bool = False
) -> ImportJob:
    """Import a file synchronously into traces; the job says how it went."""
    job, _ = import_traces(project=project, path=path, user=user, partial=partial)
    return job


def publish_import(job: ImportJob) -> None:
    html = render_to_string("traces/_import-progress.html", {"job": job})
    send_to_group(job.group_name, {"type": "progress", "html": html})
