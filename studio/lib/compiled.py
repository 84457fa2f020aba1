"""Querysets compiled to SQL once per process, then run with new values on every call.

Why: an env step runs the same few reads every time (the env lookup, the submit
state, the waited step; a worker's step load and history), and Django rebuilt and
compiled each queryset on every call: about half of each read's CPU went to turning
the same queryset into the same SQL (docs/performance.md). Here the queryset stays
the one definition of its query. It is built once with stand-in values, compiled,
and its SQL and the places of the stand-ins among the parameters are kept per
database; a call binds the real values, runs the SQL, and builds the rows as the
queryset would have: model instances with their ``select_related`` objects and
annotations, or the dicts of ``.values()`` and the tuples of ``.values_list()``.

A step's conditional UPDATEs (the claim) are the same: :class:`CompiledUpdate` keeps
``queryset.update(**values)`` as their definition and runs its SQL. Building and
compiling the claim's UPDATE cost about 0.7 ms of CPU a step; sending it, 0.05 ms.

What it accepts is checked when it compiles, and anything else is refused there,
not misread later: every argument must reach the SQL as a bound parameter, unchanged
or as the backend adapts every value of its kind (a lookup that rewrites its value,
such as ``__icontains``, does not), and the queryset must yield model instances,
dicts or plain tuples.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

from django.core.exceptions import EmptyResultSet
from django.db import connections, router
from django.db.models import Model, QuerySet
from django.db.models.query import (
    ModelIterable,
    ValuesIterable,
    ValuesListIterable,
    get_related_populators,
)
from django.db.models.sql import UpdateQuery

Row = TypeVar("Row")

#: Where the stand-in integers of the two compiles start: inside every integer field's
#: range (Django turns a lookup past a field's range into "no rows" before any SQL).
_STAND_IN_BASES = (30_001, 31_001)
#: The kinds of argument a compiled query takes, each bound as a plain parameter.
_KINDS = (int, str, datetime)
_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)
#: Where each argument goes among a query's parameters: (parameter's place, argument's
#: place, what makes the argument that parameter).
_Slots = list[tuple[int, int, Callable[[Any], Any]]]


class QueryNotCompilable(TypeError):
    """A queryset that :class:`CompiledQuery` cannot run from its SQL alone: a bug in
    the code that defines it (so not a :class:`~studio.errors.StudioError`, which is
    for users), found the first time the query runs."""


@dataclass(frozen=True)
class _Plan:
    """A query compiled for one database: its SQL, and how its rows become results."""

    sql: str
    params: tuple[Any, ...]
    #: See ``_Slots`` (a backend may wrap a value, as Django does integers in psycopg's
    #: ``Int4`` for server-side binding, or adapt it, as SQLite's stores datetimes as text)
    slots: tuple[tuple[int, int, Callable[[Any], Any]], ...]
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]
    build: Callable[[list[Any]], Any]

    def bind(self, values: Sequence[Any]) -> list[Any]:
        params = list(self.params)
        for place, argument, wrap in self.slots:
            params[place] = wrap(values[argument])
        return params


class _Compiled:
    """What a compiled query and a compiled update share: the arguments' kinds, their
    stand-ins, one plan per database (compiled twice to check it), and binding."""

    def __init__(self, make: Callable[..., Any]) -> None:
        #: The function that builds the queryset: what each call ran before it compiled.
        self.definition = make
        hints = inspect.get_annotations(make, eval_str=True)
        self._kinds: tuple[type, ...] = tuple(
            hints.get(name, object) for name in inspect.signature(make).parameters
        )
        for kind in self._kinds:
            if kind not in _KINDS:
                raise QueryNotCompilable(
                    f"{make.__qualname__}: arguments must be int, str or datetime"
                )
        self._plans: dict[tuple[str, str], _Plan] = {}
        self._lock = threading.Lock()

    def _coerce(self, values: Sequence[Any]) -> list[Any]:
        if len(values) != len(self._kinds):
            raise QueryNotCompilable(
                f"{self.definition.__qualname__} takes {len(self._kinds)} values, got {len(values)}"
            )
        coerced = []
        for kind, value in zip(self._kinds, values, strict=True):
            if kind is datetime:
                if not isinstance(value, datetime) or value.tzinfo is None:
                    raise QueryNotCompilable(
                        f"{self.definition.__qualname__}: {value!r} is not aware"
                    )
                coerced.append(value)
            else:
                coerced.append(kind(value))
        return coerced

    def _stand_ins(self, base: int = _STAND_IN_BASES[0]) -> list[Any]:
        """One value per argument, distinct from each other and from the other compile's."""
        return [_stand_in(kind, base + n) for n, kind in enumerate(self._kinds)]

    def _plan(self, alias: str) -> _Plan:
        key = (alias, connections[alias].vendor)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key) or self._compile(alias)
                self._plans[key] = plan
        return plan

    def _compile(self, alias: str) -> _Plan:
        """Compile twice, with different stand-ins: the SQL, the stand-ins' places and every
        other parameter must come out the same, or the query does not take its arguments
        as plain bound parameters (and a constant equal to a stand-in by chance is caught)."""
        first, second = (self._stand_ins(base) for base in _STAND_IN_BASES)
        compiled, sql, params = self._sql(alias, first)
        _, sql_again, params_again = self._sql(alias, second)
        slots = self._slots(alias, first, params)
        slots_again = self._slots(alias, second, params_again)
        bound = {place for place, _, _ in slots}
        fixed = [p for place, p in enumerate(params) if place not in bound]
        fixed_again = [p for place, p in enumerate(params_again) if place not in bound]
        places = [(place, argument) for place, argument, _ in slots]
        places_again = [(place, argument) for place, argument, _ in slots_again]
        if (sql, places, fixed) != (sql_again, places_again, fixed_again):
            raise QueryNotCompilable(
                f"{self.definition.__qualname__}: its SQL depends on its arguments' values"
            )
        return self._planned(compiled, sql, params, slots)

    def _slots(self, alias: str, stand_ins: list[Any], params: list[Any]) -> _Slots:
        """Where each argument's stand-in is among the parameters, and how a value of its
        kind becomes that parameter (a backend may wrap integers, as Django does in
        psycopg's ``Int4``, and store datetimes as text, as SQLite does)."""
        adapt = connections[alias].ops.adapt_datetimefield_value
        slots: _Slots = []
        for argument, stand_in in enumerate(stand_ins):
            forms: list[tuple[Any, Callable[[Any], Any]]] = [(stand_in, type(stand_in))]
            if isinstance(stand_in, datetime):
                forms = [(stand_in, _same), (adapt(stand_in), adapt)]
            places = [
                (place, argument, type(param) if wrap is type(stand_in) else wrap)
                for place, param in enumerate(params)
                for form, wrap in forms
                if isinstance(param, type(form)) and param == form
            ]
            if not places:
                raise QueryNotCompilable(
                    f"{self.definition.__qualname__}: argument {argument} is not a bound parameter "
                    "of its SQL as it was given"
                )
            slots += places
        return slots

    def _sql(self, alias: str, stand_ins: list[Any]) -> tuple[Any, str, list[Any]]:
        """What the compile gave (for :meth:`_planned`), its SQL and its parameters."""
        raise NotImplementedError

    def _planned(self, compiled: Any, sql: str, params: list[Any], slots: _Slots) -> _Plan:
        raise NotImplementedError


class CompiledQuery(_Compiled, Generic[Row]):
    """``make(*args)`` -> queryset, compiled once per database and run per call.

    Used as a decorator on the function that builds the queryset, whose parameters
    are annotated ``int``, ``str`` or ``datetime`` (what a call binds, and the kind of
    stand-in)::

        @CompiledQuery
        def step_by_id(step_id: int) -> QuerySet[Step]:
            return Step.objects.filter(pk=step_id)

        step = step_by_id.get(42)
    """

    def __init__(self, make: Callable[..., QuerySet[Any, Row]]) -> None:
        super().__init__(make)
        self._model: type[Model] | None = None

    @property
    def model(self) -> type[Model]:
        """The queryset's model (built once, when first asked: not at import time)."""
        if self._model is None:
            self._model = self.definition(*self._stand_ins()).model
        return self._model

    def all(self, *values: Any) -> list[Row]:
        alias = router.db_for_read(self.model)
        connection = connections[alias]
        plan = self._plan(alias)
        with connection.cursor() as cursor:
            cursor.execute(plan.sql, plan.bind(self._coerce(values)))
            rows = cursor.fetchall()
        results = []
        for fetched in rows:
            row = list(fetched)
            for place, functions, expression in plan.converters:
                value = row[place]
                for function in functions:
                    value = function(value, expression, connection)
                row[place] = value
            results.append(plan.build(row))
        return results

    def first(self, *values: Any) -> Row | None:
        """The first row, or None (the queryset's own order; slice it ``[:1]``)."""
        rows = self.all(*values)
        return rows[0] if rows else None

    def get(self, *values: Any) -> Row:
        """The one row, raising the model's ``DoesNotExist`` as ``QuerySet.get`` does."""
        rows = self.all(*values)
        if not rows:
            missing: type[Exception] = getattr(self.model, "DoesNotExist")  # noqa: B009
            raise missing(f"{self.model.__name__} matching query does not exist.")
        if len(rows) > 1:
            several: type[Exception] = getattr(self.model, "MultipleObjectsReturned")  # noqa: B009
            raise several(f"get() returned {len(rows)} {self.model.__name__} rows")
        return rows[0]

    def _sql(self, alias: str, stand_ins: list[Any]) -> tuple[Any, str, list[Any]]:
        queryset = self.definition(*stand_ins).using(alias)
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = _as_sql(compiler, self.definition)
        return (queryset, compiler, alias), sql, params

    def _planned(self, compiled: Any, sql: str, params: list[Any], slots: _Slots) -> _Plan:
        queryset, compiler, alias = compiled
        if compiler.has_extra_select:
            raise QueryNotCompilable(f"{self.definition.__qualname__}: extra() columns")
        fields = [column[0] for column in compiler.select[: compiler.col_count]]
        converters = tuple(
            (place, tuple(functions), expression)
            for place, (functions, expression) in compiler.get_converters(fields).items()
        )
        return _Plan(
            sql=sql,
            params=tuple(params),
            slots=tuple(slots),
            converters=converters,
            build=_row_builder(queryset, compiler, alias),
        )


class CompiledUpdate(_Compiled):
    """``make(*args)`` -> (queryset, field values): ``queryset.update(**values)``, compiled
    once per database and run per call; :meth:`run` returns the rows it changed.

    The values may be expressions (``F("attempts") + 1``); every argument must reach the
    SQL as a bound parameter, as for :class:`CompiledQuery`::

        @CompiledUpdate
        def start(step_id: int, now: datetime) -> tuple[QuerySet[Step], dict[str, Any]]:
            return Step.objects.filter(pk=step_id, status="pending"), {"started_at": now}

        changed = start.run(42, timezone.now())
    """

    def __init__(self, make: Callable[..., tuple[QuerySet[Any, Any], dict[str, Any]]]) -> None:
        super().__init__(make)
        self._model: type[Model] | None = None

    def run(self, *values: Any) -> int:
        if self._model is None:  # built once, when first run: not at import time
            self._model = self.definition(*self._stand_ins())[0].model
        alias = router.db_for_write(self._model)
        plan = self._plan(alias)
        with connections[alias].cursor() as cursor:
            cursor.execute(plan.sql, plan.bind(self._coerce(values)))
            changed: int = cursor.rowcount
        return changed

    def _sql(self, alias: str, stand_ins: list[Any]) -> tuple[Any, str, list[Any]]:
        queryset, values = self.definition(*stand_ins)
        query = queryset.using(alias).query.chain(UpdateQuery)
        query.add_update_values(values)
        query.clear_ordering(force=True)
        # Django turns an update through a join into one by primary keys, which on some
        # databases it reads first: those would be compiled into the SQL.
        query.get_initial_alias()
        if query.related_updates or query.count_active_tables() != 1:
            raise QueryNotCompilable(f"{self.definition.__qualname__}: it updates through a join")
        compiler = query.get_compiler(using=alias)
        sql, params = _as_sql(compiler, self.definition)
        return compiler, sql, params

    def _planned(self, compiled: Any, sql: str, params: list[Any], slots: _Slots) -> _Plan:
        return _Plan(sql=sql, params=tuple(params), slots=tuple(slots), converters=(), build=list)


def _as_sql(compiler: Any, make: Callable[..., Any]) -> tuple[str, list[Any]]:
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:
        raise QueryNotCompilable(
            f"{make.__qualname__}: Django found it empty before running it"
        ) from None
    return sql, list(params)


def _stand_in(kind: type, number: int) -> Any:
    if kind is int:
        return number
    if kind is datetime:
        return _EPOCH + timedelta(seconds=number)
    return f"\x00stand-in-{number}"


def _same(value: Any) -> Any:
    return value


def _row_builder(queryset: QuerySet[Any, Any], compiler: Any, alias: str) -> Callable[..., Any]:
    """What each row becomes: as Django's ``ModelIterable``, ``ValuesIterable`` or
    ``ValuesListIterable`` (unnamed, unflattened, in the selected order) makes it."""
    query = queryset.query
    iterable = queryset._iterable_class
    if iterable is ModelIterable:
        return _model_builder(queryset, compiler, alias)
    names = (
        list(query.selected)
        if query.selected
        else [*query.extra_select, *query.values_select, *query.annotation_select]
    )
    if iterable is ValuesIterable:
        return lambda row: dict(zip(names, row, strict=True))
    fields = [*queryset._fields, *(f for f in query.annotation_select if f not in queryset._fields)]  # type: ignore[attr-defined]
    if iterable is ValuesListIterable and (not queryset._fields or fields == names):  # type: ignore[attr-defined]
        return tuple
    raise QueryNotCompilable(f"{iterable.__name__} rows are not supported")


def _model_builder(queryset: QuerySet[Any, Any], compiler: Any, alias: str) -> Callable[..., Any]:
    if queryset._known_related_objects or queryset._prefetch_related_lookups:  # type: ignore[attr-defined]
        raise QueryNotCompilable("known related objects and prefetches are not supported")
    select, klass_info, annotations = (
        compiler.select,
        compiler.klass_info,
        compiler.annotation_col_map,
    )
    model = klass_info["model"]
    start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
    names = [column[0].target.attname for column in select[start:end]]
    # Django 5.2's signature (the installed stubs describe 6.0's, which adds fetch_mode).
    related = get_related_populators(klass_info, select, alias)  # type: ignore[call-arg]

    def build(row: list[Any]) -> Model:
        obj = model.from_db(alias, names, row[start:end])
        for populator in related:
            populator.populate(row, obj)
        for name, place in (annotations or {}).items():
            setattr(obj, name, row[place])
        return obj  # type: ignore[no-any-return]

    return build
