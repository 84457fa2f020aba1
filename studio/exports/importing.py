"""The import service: one way in for every file the studio reads, whatever the door.

``manage.py awb import``, ``manage.py import_data`` and the collections' import
page all call :func:`import_path`, so a given file becomes the same objects
through each of them, in a project its owner can see:

- AgentWorldBench rows become **traces**, each row kept as read (the Traces
  page's own importer, :mod:`studio.traces.services.importing`), so ``awb
  export``, re-simulation and the judge see the benchmark's text;
- trajectory and SFT records become **episodes**, bundles **scenarios**
  (:mod:`studio.exports.episode_imports`);

and a collection holds what the file became. The format is detected from the
data. Every line is checked before anything is written; if any is bad,
:class:`ImportRejected` lists every problem and nothing is imported (unless
``partial`` asks for the valid rows of an AgentWorldBench file).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.text import slugify

from simulator.errors import FormatError
from simulator.formats import hf
from simulator.formats._jsonl import lines_of
from simulator.formats.sniff import AWB, BUNDLE, SFT, TRAJECTORY, record_format
from studio.core.models import Membership, Project, Role
from studio.errors import RejectedInput
from studio.exports.episode_imports import (
    Lines,
    User,
    acting_user,
    check_bundles,
    check_sft,
    check_trajectories,
    import_bundles,
    import_sft,
    import_trajectories,
)
from studio.exports.models import Collection, CollectionItem, ItemKind
from studio.traces.models import ImportStatus, Trace, TraceTurn
from studio.traces.services.importing import import_traces

#: The account that owns what the command line creates when there is no superuser.
LOCAL_ACCOUNT = "researcher"


class ImportRejected(RejectedInput):
    """The file cannot be imported; ``errors`` lists every reason. Nothing was saved."""

    def __init__(self, errors: list[FormatError]) -> None:
        self.errors = errors
        problems = self.problems
        super().__init__("; ".join(problems[:5]) + (" …" if len(problems) > 5 else ""))

    @property
    def problems(self) -> list[str]:
        """Each problem as ``line N: field: reason``."""
        return [str(error) for error in self.errors]


@dataclass(frozen=True)
class ImportResult:
    format: str
    collection: Collection
    episodes: int = 0
    steps: int = 0
    scenarios: int = 0
    traces: int = 0
    #: Traces the project already had (the same content imported before).
    duplicates: int = 0
    #: Lines left out by a ``partial`` import, each with why.
    skipped: tuple[FormatError, ...] = ()

    def summary(self) -> str:
        """One sentence for the doors to show."""
        made = (
            f"{self.traces} trace(s), {self.episodes} episode(s), {self.steps} step(s), "
            f"{self.scenarios} scenario(s)"
        )
        already = f"; {self.duplicates} trace(s) already there" if self.duplicates else ""
        skipped = f"; {len(self.skipped)} bad line(s) skipped" if self.skipped else ""
        return f"Imported {self.format}: {made}{already}{skipped}"


def _document_lines(path: Path) -> Lines:
    return lambda: iter([path.read_text(encoding="utf-8")])


def detect(path: Path) -> tuple[str, Lines]:
    """(format, a function giving the data's lines) of a file, folder or zip."""
    if hf.is_layout(path):

        def lines() -> Iterator[str]:
            return hf.iter_layout_lines(path)

    elif path.is_file():

        def lines() -> Iterator[str]:
            return lines_of(path)

    else:
        raise _rejected(f"{path}: not a file, a dataset folder or a dataset zip")
    first = next((line for line in lines() if line.strip()), None)
    if first is None:
        raise _rejected(f"{path}: no records")
    try:
        data = json.loads(first)
    except ValueError:
        # Not JSONL: perhaps one indented bundle document, as the scenario page exports.
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError, IsADirectoryError):
            raise _rejected(f"not JSON or JSONL ({first[:60]!r})", line=1) from None
        if record_format(data) == BUNDLE:
            return BUNDLE, _document_lines(path)
        raise _rejected("the file is one JSON document but not a scenario bundle") from None
    if not isinstance(data, dict):
        raise _rejected("a record must be a JSON object", line=1)
    format = record_format(data)
    if format is None:
        raise _rejected(f"unknown record (keys: {', '.join(sorted(data)[:8])})", line=1)
    return format, lines


def _rejected(reason: str, *, line: int | None = None) -> ImportRejected:
    return ImportRejected([FormatError(reason, line=line)])


def project_for_cli(name: str) -> Project:
    """The project named (or slugged) ``name``; created when missing, owned by a local account.

    The owner is the first superuser, else the account ``researcher`` (created the
    first time): a project
    nobody is a member of would be invisible in the studio.
    """
    project = Project.objects.filter(name=name).first() or Project.objects.filter(slug=name).first()
    if project is not None:
        return project
    users = get_user_model().objects
    owner = (
        users.filter(is_superuser=True).order_by("id").first()
        or users.filter(username=LOCAL_ACCOUNT).first()
        or users.create_user(LOCAL_ACCOUNT, "", None)
    )
    project = Project.objects.create(name=name, slug=slugify(name) or f"project-{time.time_ns()}")
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    return project


def _unique_name(project: Project, name: str) -> str:
    taken = set(Collection.objects.filter(project=project).values_list("name", flat=True))
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name} ({n})", n + 1
    return candidate


def _collection(project: Project, path: Path, format: str, name: str, user: User) -> Collection:
    name = name or hf.dataset_name(path) or path.name.split(".")[0] or "Imported"
    return Collection.objects.create(
        project=project,
        name=_unique_name(project, name),
        description=f"Imported from {path.name} ({format}).",
        created_by=acting_user(user),
    )


def import_path(
    *,
    project: Project,
    path: Path,
    user: User = None,
    collection_name: str = "",
    partial: bool = False,
) -> ImportResult:
    """Import a file (any format the studio writes) into ``project``, all or nothing.

    ``partial`` imports the valid rows of an AgentWorldBench file with bad lines;
    other formats are always all or nothing.
    """
    format, lines = detect(path)
    if format == AWB:
        return _import_awb(project, path, lines, user, collection_name, partial)
    if partial:
        raise RejectedInput(f"only AgentWorldBench rows can be imported in part; this is {format}")
    checks = {SFT: check_sft, TRAJECTORY: check_trajectories, BUNDLE: check_bundles}
    problems = checks[format](lines)
    if problems:
        raise ImportRejected(problems)
    with transaction.atomic():
        collection = _collection(project, path, format, collection_name, user)
        if format == BUNDLE:
            scenarios = import_bundles(project, lines, user, collection)
            return ImportResult(format, collection, scenarios=scenarios)
        run = import_sft if format == SFT else import_trajectories
        episodes, steps = run(project, lines, user, collection)
        return ImportResult(format, collection, episodes=episodes, steps=steps)


def _import_awb(
    project: Project, path: Path, lines: Lines, user: User, name: str, partial: bool
) -> ImportResult:
    """Rows into traces (the Traces page's importer), then a collection of their last turns."""
    with tempfile.TemporaryDirectory() as scratch:
        source = path
        if hf.is_layout(path):  # a dataset folder or zip: its data file, as it is
            source = Path(scratch) / "rows.jsonl"
            with open(source, "w", encoding="utf-8", newline="") as sink:
                sink.writelines(lines())
        job, traces = import_traces(
            project=project,
            path=source,
            filename=path.name,
            user=acting_user(user),
            partial=partial,
        )
    errors = [FormatError(e["reason"], line=e["line"], field=e["field"]) for e in job.errors]
    if job.status != ImportStatus.DONE:
        raise ImportRejected(errors or [FormatError(job.message)])
    with transaction.atomic():
        collection = _collection(project, path, AWB, name, user)
        _add_last_turns(collection, traces)
    return ImportResult(
        AWB,
        collection,
        traces=len(traces),
        steps=TraceTurn.objects.filter(trace__in=traces).count(),
        duplicates=job.duplicates,
        skipped=tuple(errors),
    )


def _add_last_turns(collection: Collection, traces: list[Trace]) -> None:
    """A trace turn item stands for its trace up to that turn: the last turn, the whole trace."""
    turns = TraceTurn.objects.filter(trace__in=traces).order_by("trace_id", "index")
    last = dict(turns.values_list("trace_id", "pk"))  # the highest index wins
    CollectionItem.objects.bulk_create(
        CollectionItem(collection=collection, kind=ItemKind.TRACE_TURN, object_id=pk)
        for pk in dict.fromkeys(last[trace.pk] for trace in traces if trace.pk in last)
    )
