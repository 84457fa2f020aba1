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

What it accepts is checked when it compiles, and anything else is refused there,
not misread later: every argument must reach the SQL as a bound parameter, unchanged
(a lookup that rewrites its value, such as ``__icontains``, does not), and the
queryset must yield model instances, dicts or plain tuples.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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

Row = TypeVar("Row")

#: Where the stand-in integers of the two compiles start: inside every integer field's
#: range (Django turns a lookup past a field's range into "no rows" before any SQL).
_STAND_IN_BASES = (30_001, 31_001)


class QueryNotCompilable(TypeError):
    """A queryset that :class:`CompiledQuery` cannot run from its SQL alone: a bug in
    the code that defines it (so not a :class:`~studio.errors.StudioError`, which is
    for users), found the first time the query runs."""


@dataclass(frozen=True)
class _Plan:
    """A query compiled for one database: its SQL, and how its rows become results."""

    sql: str
    params: tuple[Any, ...]
    #: (parameter's place, argument's place, the parameter's type: a backend may wrap a
    #: value, as Django does integers in psycopg's ``Int4`` for server-side binding)
    slots: tuple[tuple[int, int, type], ...]
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]
    build: Callable[[list[Any]], Any]

    def bind(self, values: Sequence[Any]) -> list[Any]:
        params = list(self.params)
        for place, argument, wrap in self.slots:
            params[place] = wrap(values[argument])
        return params


class CompiledQuery(Generic[Row]):
    """``make(*args)`` -> queryset, compiled once per database and run per call.

    Used as a decorator on the function that builds the queryset, whose parameters
    are annotated ``int`` or ``str`` (what a call binds, and the kind of stand-in)::

        @CompiledQuery
        def step_by_id(step_id: int) -> QuerySet[Step]:
            return Step.objects.filter(pk=step_id)

        step = step_by_id.get(42)
    """

    def __init__(self, make: Callable[..., QuerySet[Any, Row]]) -> None:
        self._make = make
        hints = inspect.get_annotations(make, eval_str=True)
        self._kinds: tuple[type, ...] = tuple(
            hints.get(name, object) for name in inspect.signature(make).parameters
        )
        for kind in self._kinds:
            if kind not in (int, str):
                raise QueryNotCompilable(f"{make.__qualname__}: arguments must be int or str")
        self._plans: dict[tuple[str, str], _Plan] = {}
        self._lock = threading.Lock()
        self._model: type[Model] | None = None

    @property
    def model(self) -> type[Model]:
        """The queryset's model (built once, when first asked: not at import time)."""
        if self._model is None:
            self._model = self._make(*self._stand_ins()).model
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

    def _coerce(self, values: Sequence[Any]) -> list[Any]:
        if len(values) != len(self._kinds):
            raise QueryNotCompilable(
                f"{self._make.__qualname__} takes {len(self._kinds)} values, got {len(values)}"
            )
        return [kind(value) for kind, value in zip(self._kinds, values, strict=True)]

    def _stand_ins(self, base: int = _STAND_IN_BASES[0]) -> list[Any]:
        """One value per argument, distinct from each other and from the other compile's."""
        return [
            base + n if kind is int else f"\x00stand-in-{base + n}"
            for n, kind in enumerate(self._kinds)
        ]

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
        queryset, compiler, sql, params, slots = self._compile_with(alias, first)
        *_, sql_again, params_again, slots_again = self._compile_with(alias, second)
        bound = {place for place, _, _ in slots}
        fixed = [p for place, p in enumerate(params) if place not in bound]
        fixed_again = [p for place, p in enumerate(params_again) if place not in bound]
        if (sql, slots, fixed) != (sql_again, slots_again, fixed_again):
            raise QueryNotCompilable(
                f"{self._make.__qualname__}: its SQL depends on its arguments' values"
            )
        if compiler.has_extra_select:
            raise QueryNotCompilable(f"{self._make.__qualname__}: extra() columns")
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

    def _compile_with(
        self, alias: str, stand_ins: list[Any]
    ) -> tuple[QuerySet[Any, Row], Any, str, list[Any], list[tuple[int, int, type]]]:
        queryset = self._make(*stand_ins).using(alias)
        compiler = queryset.query.get_compiler(using=alias)
        try:
            sql, params = compiler.as_sql()
        except EmptyResultSet:
            raise QueryNotCompilable(
                f"{self._make.__qualname__}: Django found it empty before running it"
            ) from None
        slots = []
        for argument, stand_in in enumerate(stand_ins):
            places = [
                (place, type(param))
                for place, param in enumerate(params)
                if isinstance(param, type(stand_in)) and param == stand_in
            ]
            if not places:
                raise QueryNotCompilable(
                    f"{self._make.__qualname__}: argument {argument} is not a bound parameter "
                    "of its SQL as it was given"
                )
            slots += [(place, argument, wrap) for place, wrap in places]
        return queryset, compiler, sql, list(params), slots


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
