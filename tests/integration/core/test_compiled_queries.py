"""Compiled queries give what their querysets give, compile once, and refuse what they
cannot run from SQL alone."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.db.models.sql.compiler import SQLCompiler, SQLUpdateCompiler
from django.utils import timezone

from studio.episodes.models import Episode, Step
from studio.lib.compiled import CompiledQuery, CompiledUpdate, QueryNotCompilable
from tests.integration.episodes import helpers

pytestmark = pytest.mark.django_db


def step_with_episode_queryset(step_id: int) -> QuerySet[Step]:
    return Step.objects.select_related("episode__world_revision", "episode__scenario").filter(
        pk=step_id
    )


step_with_episode = CompiledQuery(step_with_episode_queryset)


def episode_state_queryset(episode_id: int) -> QuerySet[Any, Any]:
    steps = Step.objects.filter(episode=OuterRef("pk"))
    return (
        Episode.objects.filter(pk=episode_id)
        .values("status", "next_perturbations")
        .annotate(busy=Exists(steps.filter(status="pending")))
    )


episode_state = CompiledQuery(episode_state_queryset)


@CompiledQuery
def turns(episode_id: int, before: int) -> QuerySet[Step, tuple[str, str]]:
    steps = Step.objects.filter(episode_id=episode_id, index__lt=before, status="done")
    return steps.order_by("index").values_list("action", "observation")


def counted_compiles(
    monkeypatch: pytest.MonkeyPatch, compiler_class: type[SQLCompiler]
) -> list[Any]:
    """The model of each query ``compiler_class`` compiles to SQL from now on."""
    compiles: list[Any] = []
    as_sql = compiler_class.as_sql

    def counted(compiler: SQLCompiler, *args: Any, **kwargs: Any) -> Any:
        compiles.append(compiler.query.model)
        return as_sql(compiler, *args, **kwargs)

    monkeypatch.setattr(compiler_class, "as_sql", counted)
    return compiles


@pytest.fixture
def episode() -> Episode:
    project, user = helpers.project_with()
    episode = helpers.episode(project, user)
    for index in (1, 2, 3):
        Step.objects.create(
            episode=episode,
            index=index,
            action=f"ls {index}",
            observation=f"file-{index}",
            status="done" if index < 3 else "pending",
            telemetry={"n": index},
        )
    return episode


def test_a_model_row_has_every_field_and_its_related_objects_of_the_queryset(
    episode: Episode, django_assert_num_queries: Any
) -> None:
    step = episode.steps.get(index=2)
    expected = step_with_episode_queryset(step.pk).get()

    with django_assert_num_queries(1):  # the related objects came with it
        got = step_with_episode.get(step.pk)
        related = (got.episode.title, got.episode.world_revision.spec, got.episode.scenario)

    for field in Step._meta.concrete_fields:
        assert getattr(got, field.attname) == getattr(expected, field.attname), field.name
    assert got.telemetry == {"n": 2} and got.created_at.tzinfo is not None
    assert related == (
        expected.episode.title,
        expected.episode.world_revision.spec,
        expected.episode.scenario,
    )
    assert got._state.db == "default" and not got._state.adding


def test_values_with_annotations_and_values_list_rows_are_the_querysets(episode: Episode) -> None:
    assert episode_state.get(episode.pk) == episode_state_queryset(episode.pk).get()
    assert episode_state.get(episode.pk)["busy"] is True
    assert turns.all(episode.pk, 3) == [("ls 1", "file-1"), ("ls 2", "file-2")]
    assert turns.all(episode.pk, 2) == [("ls 1", "file-1")]


def test_a_missing_row_is_none_for_first_and_does_not_exist_for_get(episode: Episode) -> None:
    assert step_with_episode.first(10**9) is None
    with pytest.raises(Step.DoesNotExist):
        step_with_episode.get(10**9)


def test_the_sql_is_compiled_once_and_reused_with_new_values(
    episode: Episode, monkeypatch: pytest.MonkeyPatch
) -> None:
    @CompiledQuery
    def actions(episode_id: int, before: int) -> QuerySet[Step, tuple[str]]:
        return Step.objects.filter(episode_id=episode_id, index__lt=before).values_list("action")

    compiles = counted_compiles(monkeypatch, SQLCompiler)
    assert actions.all(episode.pk, 2) == [("ls 1",)]
    compiled = len(compiles)
    assert sorted(actions.all(episode.pk, 4)) == [("ls 1",), ("ls 2",), ("ls 3",)]
    assert actions.all(episode.pk + 1, 4) == []
    assert compiled > 0 and len(compiles) == compiled


def test_a_value_a_lookup_rewrites_is_refused_when_it_first_runs(episode: Episode) -> None:
    @CompiledQuery
    def titled(text: str) -> QuerySet[Episode]:
        return Episode.objects.filter(title__icontains=text)

    with pytest.raises(QueryNotCompilable, match="not a bound parameter"):
        titled.all("episode")


def test_sql_that_depends_on_the_value_is_refused(episode: Episode) -> None:
    @CompiledQuery
    def small_or_large(index: int) -> QuerySet[Step]:
        # Stand-ins differ between the two compiles, so one of each kind is met.
        return Step.objects.filter(index=index) if index < 31_000 else Step.objects.filter(pk=index)

    with pytest.raises(QueryNotCompilable, match="depends on its arguments"):
        small_or_large.all(1)


def test_arguments_other_than_int_str_or_datetime_are_refused_at_definition() -> None:
    def by_ids(ids: list[int]) -> QuerySet[Step]:
        return Step.objects.filter(pk__in=ids)

    with pytest.raises(QueryNotCompilable, match="int, str or datetime"):
        CompiledQuery(by_ids)


@CompiledUpdate
def start_pending(
    episode_id: int, now: datetime, older_than: datetime
) -> tuple[QuerySet[Step], dict[str, Any]]:
    """A claim's shape: a condition with a datetime, a datetime value, an expression."""
    waiting = Q(status="pending") | Q(status="running", started_at__lt=older_than)
    return Step.objects.filter(waiting, episode_id=episode_id), {
        "status": "running",
        "started_at": now,
        "attempts": F("attempts") + 1,
    }


def test_a_compiled_update_changes_what_the_querysets_update_would(episode: Episode) -> None:
    now = timezone.now()
    Step.objects.filter(index=2).update(status="running", started_at=now - timedelta(hours=2))
    Step.objects.filter(index=1).update(status="running", started_at=now)

    assert start_pending.run(episode.pk, now, now - timedelta(hours=1)) == 2
    assert start_pending.run(episode.pk + 1, now, now - timedelta(hours=1)) == 0

    rows = Step.objects.filter(episode=episode).order_by("index")
    assert [(s.status, s.started_at, s.attempts) for s in rows] == [
        ("running", now, 0),
        ("running", now, 1),
        ("running", now, 1),
    ]


def test_a_compiled_update_compiles_once(episode: Episode, monkeypatch: pytest.MonkeyPatch) -> None:
    compiles = counted_compiles(monkeypatch, SQLUpdateCompiler)

    @CompiledUpdate
    def rename(step_id: int, action: str) -> tuple[QuerySet[Step], dict[str, Any]]:
        return Step.objects.filter(pk=step_id), {"action": action}

    first, second = Step.objects.filter(episode=episode).order_by("index")[:2]
    assert rename.run(first.pk, "pwd") == 1
    compiled = len(compiles)
    assert rename.run(second.pk, "whoami") == 1
    assert compiled == 2 and len(compiles) == compiled
    actions = Step.objects.filter(episode=episode).order_by("index").values_list("action")
    assert list(actions) == [("pwd",), ("whoami",), ("ls 3",)]


def test_an_update_through_a_join_is_refused(episode: Episode) -> None:
    @CompiledUpdate
    def rename_in(title: str, action: str) -> tuple[QuerySet[Step], dict[str, Any]]:
        return Step.objects.filter(episode__title=title), {"action": action}

    with pytest.raises(QueryNotCompilable, match="through a join"):
        rename_in.run(episode.title, "ls")
