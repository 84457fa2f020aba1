"""Writes for traces: imports, simulations, judge scores and annotations."""

from __future__ import annotations

import asyncio
import hashlib
import json
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.template.loader import render_to_string
from django.utils import timezone

from simulator.backends import create_backend
from simulator.errors import FormatError
from simulator.formats.awb import AwbRow, iter_awb
from simulator.formats.trajectory import EpisodeRecord, iter_trajectories
from simulator.perturbations import Perturbation
from simulator.review.awb_eval import RecordedTurn, SimulatedTurnResult, simulate_trace
from simulator.review.judge import (
    DIMENSIONS,
    normalize,
)
from simulator.types import Sampling
from studio.core.endpoints import default_endpoint_spec, describe_spec
from studio.core.models import Membership, ModelEndpoint, Project, Role
from studio.lib.channels import send_to_group
from studio.traces.awb_rows import project_lines, trace_fields, trace_world, turn_row
from studio.traces.models import (
    Annotation,
    ImportJob,
    ImportStatus,
    JudgeScore,
    SimulatedTurn,
    Simulation,
    SimulationStatus,
    Trace,
    TraceRow,
    TraceSource,
    TraceTurn,
)

MAX_STORED_ERRORS = 200
PROGRESS_EVERY_S = 0.25

Progress = Callable[[ImportJob], None]


# ── Imports ─────────────────────────────────────────────────────────────────────


class ImportTooLarge(ValueError):
    pass


def detect_source(path: Path) -> str:
    """``trajectory`` when the first record carries ``trajectory_version``, else ``awb``."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.strip():
                try:
                    first = json.loads(line)
                except ValueError:
                    return TraceSource.AWB
                if isinstance(first, dict) and "trajectory_version" in first:
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


def import_job_create(
    *,
    project: Project,
    path: Path,
    filename: str,
    user: Any = None,
    partial: bool = False,
) -> ImportJob:
    """A pending import of a file already on disk; refuses files over the size limit."""
    size = path.stat().st_size
    if size > settings.STUDIO_MAX_UPLOAD_BYTES:
        raise ImportTooLarge(
            f"{filename} is {size} bytes; the limit is {settings.STUDIO_MAX_UPLOAD_BYTES}"
        )
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


def _awb_check(
    path: Path, job: ImportJob, report: _Reporter
) -> tuple[list[dict[str, Any]], set[int]]:
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


def _trajectory_trace_fields(record: EpisodeRecord) -> tuple[dict[str, Any], list[dict[str, str]]]:
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


def _trace_get_or_create(
    project: Project, job: ImportJob | None, fields: dict[str, Any], turns: list[dict[str, str]]
) -> tuple[Trace, bool]:
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
    return _trace_get_or_create(project, None, fields, turns)


def import_run(*, job_id: int, publish: Progress | None = None) -> ImportJob:
    """Check the whole file, then import it (or its valid lines when ``partial``).

    Two streaming passes, so memory stays constant whatever the file's size:
    the first collects every problem and, for AgentWorldBench files, the line of
    each trajectory's last turn (which holds all earlier turns); the second
    imports. With any problem and ``partial`` off, nothing is imported.
    """
    claimed = ImportJob.objects.filter(pk=job_id, status=ImportStatus.PENDING).update(
        status=ImportStatus.RUNNING
    )
    job = ImportJob.objects.get(pk=job_id)
    if not claimed:
        return job
    path = Path(job.path)
    report = _Reporter(job, publish)
    try:
        job.source = detect_source(path)
        job.lines_total = _count_lines(path)
        job.message = "Checking every line"
        job.save(update_fields=["source", "lines_total", "message"])
        report(0, force=True)
        if job.source == TraceSource.AWB:
            errors, chosen = _awb_check(path, job, report)
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
            return job
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
            trace, is_new = _trace_get_or_create(job.project, job, fields, turns)
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
        return job
    except (OSError, UnicodeDecodeError) as exc:
        job.status = ImportStatus.FAILED
        job.message = f"Could not read the file: {exc}"
        return job
    finally:
        job.finished_at = timezone.now()
        job.save()
        path.unlink(missing_ok=True)
        if publish is not None:
            publish(job)


def import_file(
    *, project: Project, path: Path, user: Any = None, partial: bool = False
) -> ImportJob:
    """Import a file synchronously (the CLI); the file is copied so the original stays."""
    size = Path(path).stat().st_size
    if size > settings.STUDIO_MAX_UPLOAD_BYTES:
        raise ImportTooLarge(
            f"{path} is {size} bytes; the limit is {settings.STUDIO_MAX_UPLOAD_BYTES}"
        )
    upload_dir = settings.VAR_DIR / "uploads"
    upload_dir.mkdir(parents=True, exist_ok=True)
    copy = upload_dir / f"cli-{time.time_ns()}.jsonl"
    shutil.copyfile(path, copy)
    job = import_job_create(
        project=project, path=copy, filename=Path(path).name, user=user, partial=partial
    )
    return import_run(job_id=job.pk)


def publish_import(job: ImportJob) -> None:
    html = render_to_string("traces/_import-progress.html", {"job": job})
    send_to_group(job.group_name, {"type": "progress", "html": html})


def project_for_cli(name: str) -> Project:
    """The project named (or slugged) ``name``, created if missing and owned by a local account."""
    from django.utils.text import slugify

    project = Project.objects.filter(name=name).first() or Project.objects.filter(slug=name).first()
    if project is not None:
        return project
    users = get_user_model().objects
    owner = users.filter(is_superuser=True).order_by("id").first()
    if owner is None:
        owner = users.create_user("researcher", "", None)
    project = Project.objects.create(name=name, slug=slugify(name) or f"project-{time.time_ns()}")
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    return project


# ── Simulations ─────────────────────────────────────────────────────────────────


def endpoint_spec(endpoint: ModelEndpoint | None) -> dict[str, Any]:
    return endpoint.to_spec() if endpoint is not None else default_endpoint_spec()


def simulation_create(
    *,
    trace: Trace,
    user: Any,
    mode: str,
    scenario: Any = None,
    endpoint: ModelEndpoint | None = None,
) -> Simulation:
    from studio.lib.tasks import dispatch
    from studio.traces.tasks import run_simulation

    simulation = Simulation.objects.create(
        project=trace.project,
        trace=trace,
        mode=mode,
        scenario=scenario,
        endpoint=endpoint,
        endpoint_label=describe_spec(endpoint_spec(endpoint)),
        created_by=user,
        dispatched_at=timezone.now(),
    )
    dispatch(run_simulation, simulation.pk)
    return simulation


def _turn_fields(outcome: SimulatedTurnResult) -> dict[str, Any]:
    real = [v.to_dict() for v in outcome.real_verifiers]
    notes = list(outcome.action_notes)  # what the studio could not validate in the action
    if outcome.result is None:
        return {
            "error": f"{outcome.error_kind}: {outcome.error}",
            "real_verifiers": real,
            "telemetry": {"action_notes": notes},
        }
    result = outcome.result
    return {
        "observation": result.observation,
        "reasoning": result.reasoning,
        "raw_output": result.raw_output,
        "telemetry": {
            **result.timings.to_dict(),
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "cached_tokens": result.usage.cached_tokens,
            "finish_reason": result.finish_reason,
            "action_notes": notes,
        },
        "firings": [f.to_dict() for f in result.firings],
        "verifiers": [v.to_dict() for v in result.verifiers],
        "real_verifiers": real,
    }


def simulation_claim(simulation_id: int) -> bool:
    """pending -> running in one conditional UPDATE; also takes over an abandoned run.

    A simulation still running after the task time limit was claimed by a worker
    that died (a living one is killed at that limit): its turns are run again and
    saved over the same rows.
    """
    stale = timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    abandoned = Q(status=SimulationStatus.RUNNING, started_at__lt=stale)
    claimed = Simulation.objects.filter(
        Q(status=SimulationStatus.PENDING) | abandoned, pk=simulation_id
    ).update(status=SimulationStatus.RUNNING, started_at=timezone.now())
    return claimed == 1


def simulation_run(*, simulation_id: int) -> Simulation:
    """Claim a pending simulation and run it, saving and publishing each turn."""
    claimed = simulation_claim(simulation_id)
    simulation = Simulation.objects.select_related("trace", "scenario", "endpoint").get(
        pk=simulation_id
    )
    if not claimed:
        return simulation
    trace = simulation.trace
    turns = list(trace.turns.all())
    perturbations: tuple[Perturbation, ...] = ()
    seed = 0
    sampling: Sampling | None = None  # eval.py's, unless the scenario sets its own
    if simulation.scenario is not None:
        spec = simulation.scenario.spec
        perturbations = tuple(Perturbation.from_dict(p) for p in spec.get("perturbations", []))
        seed = int(spec.get("seed", 0))
        if spec.get("sampling"):
            sampling = Sampling.from_dict(spec["sampling"])
    by_index = {t.index: t for t in turns}

    def save(outcome: SimulatedTurnResult) -> None:
        SimulatedTurn.objects.update_or_create(
            simulation=simulation,
            index=outcome.index,
            defaults={"turn": by_index[outcome.index], **_turn_fields(outcome)},
        )
        Simulation.objects.filter(pk=simulation.pk).update(turns_done=outcome.index)
        simulation.turns_done = outcome.index

    # The model runs on its own event loop in a helper thread; turns come back through
    # a queue and are saved here, so the database is only touched from this thread.
    outcomes: queue.Queue[SimulatedTurnResult | BaseException | None] = queue.Queue()

    rows = (
        [turn_row(trace, t.index) for t in turns] if trace.rows.exists() else None
    )  # an imported benchmark trace: each request is eval.py's for its row

    async def run() -> None:
        backend = create_backend(endpoint_spec(simulation.endpoint))
        try:
            await simulate_trace(
                trace_world(trace),
                [RecordedTurn(t.action, t.observation) for t in turns],
                backend,
                mode=simulation.mode,
                perturbations=perturbations,
                seed=seed,
                rows=rows,
                sampling=sampling,
                on_turn=outcomes.put,
            )
        finally:
            await backend.aclose()

    def worker() -> None:
        try:
            asyncio.run(run())
        except BaseException as exc:  # handed to the saving thread
            outcomes.put(exc)
        else:
            outcomes.put(None)

    thread = threading.Thread(target=worker, name=f"simulation-{simulation.pk}", daemon=True)
    thread.start()
    simulation.status = SimulationStatus.DONE
    while (item := outcomes.get()) is not None:
        if isinstance(item, BaseException):
            simulation.status = SimulationStatus.FAILED
            simulation.error = f"{type(item).__name__}: {item}"
            break
        save(item)
        send_to_group(
            simulation.group_name,
            {"type": "progress", "html": simulation_progress_html(simulation, len(turns))},
        )
    thread.join()
    simulation.finished_at = timezone.now()
    simulation.save(update_fields=["status", "error", "finished_at"])
    send_to_group(
        simulation.group_name,
        {"type": "progress", "html": simulation_progress_html(simulation, len(turns))},
    )
    return simulation


def simulation_progress_html(simulation: Simulation, total: int) -> str:
    return render_to_string(
        "traces/_simulation-progress.html", {"simulation": simulation, "total": total}
    )


# ── Judge ───────────────────────────────────────────────────────────────────────


def awb_row_for(turn: SimulatedTurn) -> dict[str, Any]:
    """The AgentWorldBench row a simulated turn answers (for the judge's context)."""
    return turn_row(turn.simulation.trace, turn.index)


# The judge task itself (concurrent, live badges) is studio/traces/turn_judging.py.


def judge_score_save(
    *, turn: SimulatedTurn, fields: dict[str, Any], endpoint_label: str
) -> JudgeScore:
    """Store eval.py-style judge fields for a simulated turn."""
    failed = bool(fields.get("failed", 1.0))
    mean_score = float(fields.get("total_score", 0) or 0)
    return JudgeScore.objects.create(
        simulated_turn=turn,
        **{d: int(fields.get(d, 0) or 0) for d in DIMENSIONS},
        mean_score=mean_score,
        total_score=normalize(mean_score) if mean_score else 0.0,
        failed=failed,
        strengths=list(fields.get("strengths", [])),
        weaknesses=list(fields.get("weaknesses", [])),
        extracted_output=str(fields.get("extracted_output", "")),
        judge_raw_output=str(fields.get("judge_raw_output", "")),
        judge_endpoint=endpoint_label,
    )


# ── Annotations ─────────────────────────────────────────────────────────────────


def annotation_save(*, turn: SimulatedTurn, user: Any, data: dict[str, Any]) -> Annotation:
    """Create or update the user's annotation of ``turn`` with the fields in ``data``."""
    annotation, _ = Annotation.objects.get_or_create(simulated_turn=turn, user=user)
    for name in DIMENSIONS:
        if name in data:
            value = data[name]
            annotation.__dict__[name] = int(value) if value not in (None, "") else None
    if "tags" in data:
        tags = data["tags"]
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",")]
        annotation.tags = [t for t in tags if t][:20]
    for name in ("note", "corrected_observation"):
        if name in data:
            setattr(annotation, name, str(data[name]))
    if "verdict" in data and data["verdict"] in ("", "accept", "reject"):
        annotation.verdict = data["verdict"]
    annotation.full_clean(exclude=["simulated_turn", "user"])
    annotation.save()
    return annotation


# ── AgentWorldBench files in and out ────────────────────────────────────────────


def _awb_simulated_turn(project: Project, row: dict[str, Any], label: str) -> SimulatedTurn:
    """The stored simulated turn of an AWB row's ``gen`` (its trace created if missing)."""
    from simulator.review.judge import extract_observation

    fields, turns = trace_fields(AwbRow(row))
    trace = (
        Trace.objects.filter(
            project=project,
            source=TraceSource.AWB,
            task=fields["task"],
            external_id=fields["external_id"],
        )
        .order_by("id")
        .first()
    )
    if trace is None or trace.turns.count() < int(row["turn_idx"]):
        trace, _ = _trace_get_or_create(project, None, fields, turns)
    simulation, _ = Simulation.objects.get_or_create(
        project=project,
        trace=trace,
        origin="awb",
        endpoint_label=label[:300],
        defaults={
            "mode": "teacher_forced",
            "status": SimulationStatus.DONE,
            "finished_at": timezone.now(),
        },
    )
    index = int(row["turn_idx"])
    gen = str(row.get("gen", ""))
    turn, _ = SimulatedTurn.objects.update_or_create(
        simulation=simulation,
        index=index,
        defaults={
            "turn": trace.turns.get(index=index),
            "observation": extract_observation(gen) if gen else "",
            "raw_output": gen,
            "error": "" if gen else "no generation",
        },
    )
    done = simulation.turns.count()
    Simulation.objects.filter(pk=simulation.pk).update(turns_done=done)
    return turn


def awb_store_predictions(*, project: Project, rows: list[dict[str, Any]], label: str) -> int:
    """Store ``awb infer`` generations as simulated turns for review; returns how many."""
    for row in rows:
        _awb_simulated_turn(project, row, label)
    return len(rows)


def awb_store_judged(*, project: Project, rows: list[dict[str, Any]], label: str) -> int:
    """Store ``awb judge`` results (and their generations) in the studio; returns how many."""
    for row in rows:
        # The generation stored by `awb infer --project` if there is one, else a new record.
        stored = (
            SimulatedTurn.objects.filter(
                simulation__project=project,
                simulation__origin="awb",
                simulation__trace__task=str(row.get("task", "")),
                simulation__trace__external_id=json.dumps(row.get("id")),
                index=int(row["turn_idx"]),
                raw_output=str(row.get("gen", "")),
            )
            .order_by("-id")
            .first()
        )
        turn = stored or _awb_simulated_turn(project, row, "awb judge input")
        judge_score_save(turn=turn, fields=row, endpoint_label=label)
    return len(rows)


def awb_export(*, project: Project, target: Path) -> int:
    """Write the project's traces as AgentWorldBench JSONL; returns the row count.

    Imported rows are written back byte for byte in their file's order
    (:func:`studio.traces.awb_rows.project_lines`), line endings included: only a
    row that ended a file without a newline gets one when another row follows it.
    """
    count = 0
    previous: str | None = None
    with open(target, "w", encoding="utf-8", newline="") as sink:
        for line in project_lines(project):
            if previous is not None:
                sink.write(previous if previous.endswith("\n") else previous + "\n")
            previous = line
            count += 1
        if previous is not None:
            sink.write(previous)
    return count
