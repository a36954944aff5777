"""The query engine: SELECT over several tables, grouping, subqueries, UNION and
INSERT/REPLACE ... SELECT.

A SELECT of at most one table without grouping, aggregates or subqueries (sysbench's point
and range selects) goes to :func:`rpl.core.execution.dml.run_select` unchanged; this module
runs the rest. A :class:`QueryPlan` is one SELECT compiled once per execution:

* **FROM.** The tables' rows are side by side in one row, in join order (RIGHT JOIN is
  rewritten as LEFT JOIN with the tables swapped; ``*`` still lists them as written). The
  join is a nested loop: a table whose whole primary key the ON condition (or, for an
  inner join, WHERE) fixes from the tables before it is read by key lookups, any other by
  one scan per execution; FROM's first table is narrowed by the WHERE conditions on its
  own primary key (:func:`rpl.core.execution.dml.candidate_rows`). A LEFT JOIN with no
  match gives NULLs for the table. WHERE is then evaluated on every joined row, so the
  lookups only ever narrow.
* **Grouping.** Rows are grouped by the GROUP BY values (one group of all rows for
  aggregates without GROUP BY); aggregates read the current group, every other column
  the group's first row. ONLY_FULL_GROUP_BY refuses columns that are neither grouped nor
  determined by a grouped primary key (1055) or, without GROUP BY, any bare column next
  to an aggregate (1140).
* **Subqueries** are plans of their own whose rows are their tables' followed by the
  outer row (see :mod:`rpl.core.execution.expressions`); one that reads no outer column
  runs once per execution and is remembered.

All plans of a statement read in the statement's one transaction (:class:`Shared`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence

import attrs

from rpl.core.engine import Table, TableSchema, Transaction
from rpl.core.errors import (
    ER_BAD_FIELD_ERROR,
    ER_BAD_TABLE_ERROR,
    ER_MIX_OF_GROUP_FUNC_AND_FIELDS_V2,
    ER_NO_TABLES_USED,
    ER_NONUNIQ_TABLE,
    ER_NOT_SUPPORTED_YET,
    ER_UPDATE_TABLE_USED,
    ER_WRONG_FIELD_WITH_GROUP,
    ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
    MySQLError,
)
from rpl.core.execution import dml, virtual_tables
from rpl.core.execution.expressions import (
    AGGREGATES,
    Compiled,
    Compiler,
    Scope,
    ScopeTable,
    SubqueryRunner,
    order_key,
    to_number,
    truth,
)
from rpl.core.execution.results import Result, Rows
from rpl.core.execution.session import Session
from rpl.core.execution.values import column_type
from rpl.core.net.responses import Column, column_for_value
from rpl.core.sql import ast
from rpl.core.sql.parser import parse
from rpl.core.sql.walk import table_names

Row = Sequence[object]
Query = ast.Select | ast.Union


class Shared:
    """What every plan of one statement shares: the transaction they read in (the
    session's open one, unless the statement sets another).
    """

    __slots__ = ("trx", "session")

    def __init__(self, session: Session) -> None:
        self.trx: Transaction | None = None
        self.session = session

    def transaction(self) -> Transaction:
        return self.trx if self.trx is not None else self.session.transaction()


@attrs.define
class _Source:
    """One table of FROM as the query reads it: an engine table or a derived table."""

    qualifier: str
    db: str | None
    names: list[str]
    table: Table | None = None
    derived: QueryPlan | UnionPlan | None = None
    hidden: frozenset[str] = frozenset()
    offset: int = 0

    @property
    def schema(self) -> TableSchema | None:
        return self.table.schema if self.table is not None else None

    def column_meta(self, index: int, rows: Sequence[Row], position: int) -> Column:
        schema = self.schema
        if schema is not None:
            return column_type(schema.columns[index], schema)
        value = next((r[position] for r in rows if r[position] is not None), None)
        return column_for_value(self.names[index], value)


@attrs.define
class _Step:
    """A table of the join in execution order, with how it joins the ones before it."""

    source: _Source
    kind: str
    on: Compiled | None = None
    lookup: list[Compiled] | None = None


# ------------------------------------------------------------------ entry points
def run_select(session: Session, stmt: ast.Select) -> Result:
    """SELECT: the single-table fast path when it can, a :class:`QueryPlan` otherwise."""
    if not _needs_plan(stmt):
        return dml.run_select(session, stmt)
    return _run(session, stmt)


def run_union(session: Session, stmt: ast.Union) -> Result:
    """SELECT ... UNION [ALL] SELECT ..."""
    return _run(session, stmt)


def _run(session: Session, stmt: Query) -> Result:
    shared = Shared(session)
    plan = build_plan(session, stmt, shared, None)

    def body(trx: Transaction) -> Result:
        shared.trx = trx
        rows = plan.run(())
        return Rows(plan.columns(rows), rows)

    return session.run_statement(body, monitoring=_monitoring(plan))


def run_insert(session: Session, stmt: ast.Insert) -> Result:
    """INSERT / REPLACE: VALUES by :func:`dml.run_insert`; ``... SELECT`` reads the query's
    rows first (so a query of the target table sees it as it was), then inserts them as
    VALUES would. ROW format logs the rows; STATEMENT logs the statement itself when it
    computes the same rows on a replica (:func:`_replayable`: pt-table-checksum's REPLACE
    ... SELECT must run on the replica's own data), else one INSERT of the rows.
    """
    if stmt.select is None:
        return dml.run_insert(session, stmt, _planner(session, stmt.table))
    table = dml.resolve_table(session, stmt.table)
    shared = Shared(session)
    plan = build_plan(session, stmt.select, shared, None)
    on_duplicate = dml.on_duplicate_update(session, table.schema, stmt.on_duplicate)

    replayable = _replayable(stmt) and table.schema.auto_increment_position is None

    def body(trx: Transaction) -> Result:
        shared.trx = trx
        rows = plan.run(())
        result = dml.insert_rows(session, trx, table, stmt, rows, on_duplicate)
        if replayable and session.binlog_format() == "STATEMENT":
            session.replayed_statement = _same_statement(session.statement_text, stmt)
        return result

    return session.run_statement(body)


def _same_statement(text: str | None, stmt: ast.Insert) -> str | None:
    """``text`` when it parses to ``stmt`` (a prepared statement's text holds ``?`` where
    the statement ran with values: that text would not replay), else None.
    """
    if text is None:
        return None
    try:
        return text if parse(text) == stmt else None
    except MySQLError:
        return None


NONDETERMINISTIC = frozenset(
    """
    NOW CURRENT_TIMESTAMP SYSDATE LOCALTIME LOCALTIMESTAMP UTC_TIMESTAMP UTC_DATE UTC_TIME
    CURDATE CURTIME CURRENT_DATE CURRENT_TIME UNIX_TIMESTAMP RAND UUID UUID_SHORT USER
    CURRENT_USER SESSION_USER SYSTEM_USER CONNECTION_ID LAST_INSERT_ID FOUND_ROWS ROW_COUNT
    VERSION
    """.split()
)
"""Functions whose value on a replica's applier may differ from the source's."""


def _replayable(node: object) -> bool:
    """Whether ``node`` (an INSERT ... SELECT) computes the same rows on a replica with the
    same data: no function of the moment, the session or the server, no variable. The
    engine reads in primary-key order, so the query's row order is the data's.
    """
    if isinstance(node, ast.SysVar | ast.UserVar | ast.AssignUserVar):
        return False
    if isinstance(node, ast.FuncCall) and node.name in NONDETERMINISTIC:
        return False
    if isinstance(node, tuple):
        return all(_replayable(item) for item in node)
    if isinstance(node, ast.Expression | ast.Statement | ast.SelectItem | ast.OrderItem):
        return all(_replayable(getattr(node, f.name)) for f in attrs.fields(type(node)))
    if isinstance(node, ast.When | ast.JoinStep | ast.DerivedTable | ast.Assignment):
        return all(_replayable(getattr(node, f.name)) for f in attrs.fields(type(node)))
    return True


def run_update(session: Session, stmt: ast.Update) -> Result:
    """UPDATE, its subqueries planned here (:func:`dml.run_update` does the rest)."""
    return dml.run_update(session, stmt, _planner(session, stmt.table))


def run_delete(session: Session, stmt: ast.Delete) -> Result:
    """DELETE, its subqueries planned here (:func:`dml.run_delete` does the rest)."""
    return dml.run_delete(session, stmt, _planner(session, stmt.table))


def _planner(session: Session, target: ast.TableName) -> dml.SubqueryPlanner:
    """Plans a write's subqueries; one reading the table written is 1093, as in MySQL."""
    shared = Shared(session)
    db = (target.schema or session.db or "").lower()

    def plan(select: Query, outer: Compiler) -> SubqueryRunner:
        for name in table_names(select):
            if name.name.lower() == target.name.lower() and (
                (name.schema or session.db or "").lower() == db
            ):
                raise MySQLError.of(ER_UPDATE_TABLE_USED, target.name)
        return build_plan(session, select, shared, outer)

    return plan


def build_plan(
    session: Session, stmt: Query, shared: Shared, outer: Compiler | None
) -> QueryPlan | UnionPlan:
    """``stmt`` compiled for running in ``shared``'s transaction."""
    if isinstance(stmt, ast.Union):
        return UnionPlan(session, stmt, shared, outer)
    return QueryPlan(session, stmt, shared, outer)


def _needs_plan(stmt: ast.Select) -> bool:
    """Whether ``stmt`` needs more than the single-table fast path."""
    if stmt.joins or stmt.group_by or stmt.having is not None or stmt.subqueries:
        return True
    items = stmt.items
    known = _aggregated_lists.get(id(items))
    if known is not None and known[0] is items:
        return known[1]
    aggregated = any(has_aggregate(item.expr) for item in items)
    if len(_aggregated_lists) >= 1024:
        _aggregated_lists.clear()
    _aggregated_lists[id(items)] = (items, aggregated)
    return aggregated


_aggregated_lists: dict[int, tuple[tuple[ast.SelectItem, ...], bool]] = {}
"""Whether a select list calls an aggregate, by the list's id (an entry holds its list,
so the id is not reused while it lives; the lists are immutable): a statement of a known
shape and a prepared statement's executions share their select list."""


def has_aggregate(expr: object) -> bool:
    """Whether ``expr`` calls an aggregate function outside any subquery."""
    if isinstance(expr, ast.Column | ast.Literal | ast.Star | ast.Placeholder):
        return False
    if isinstance(expr, ast.FuncCall) and expr.name in AGGREGATES:
        return True
    return any(has_aggregate(child) for child in children(expr))


def children(expr: object) -> Iterator[object]:
    """The expression nodes directly under ``expr`` (not into subqueries)."""
    if not isinstance(expr, ast.Expression | ast.When):
        return
    for field in attrs.fields(type(expr)):
        value = getattr(expr, field.name)
        for child in value if isinstance(value, tuple) else (value,):
            if isinstance(child, ast.Expression | ast.When):
                yield child


def _bare_columns(expr: object) -> Iterator[ast.Column]:
    """The columns ``expr`` reads outside aggregates and subqueries."""
    if isinstance(expr, ast.Column):
        yield expr
        return
    if isinstance(expr, ast.FuncCall) and expr.name in AGGREGATES:
        return
    for child in children(expr):
        yield from _bare_columns(child)


def _conjuncts(expr: ast.Expression | None) -> list[ast.Expression]:
    """The terms of a chain of ANDs (none for no WHERE)."""
    return [] if expr is None else dml.conjuncts(expr)


def _substitute(expr: ast.Expression, aliases: dict[str, ast.Expression]) -> ast.Expression:
    """``expr`` with each unqualified column named like a select-list alias replaced by
    that item's expression (HAVING and ORDER BY may name aliases, as in MySQL).
    """
    if isinstance(expr, ast.Column):
        if expr.table is None:
            return aliases.get(expr.name.lower(), expr)
        return expr
    if not isinstance(expr, ast.Expression) or isinstance(expr, ast.Literal):
        return expr
    changed: dict[str, object] = {}
    for field in attrs.fields(type(expr)):
        value = getattr(expr, field.name)
        if isinstance(value, ast.Expression):
            changed[field.name] = _substitute(value, aliases)
        elif isinstance(value, tuple) and value and isinstance(value[0], ast.Expression):
            changed[field.name] = tuple(_substitute(v, aliases) for v in value)
    return attrs.evolve(expr, **changed) if changed else expr


def _simple(expr: ast.Expression) -> bool:
    """An expression a key lookup may compute: columns, constants and operators."""
    if isinstance(expr, ast.Column | ast.Literal | ast.UserVar):
        return True
    if isinstance(expr, ast.Binary):
        return _simple(expr.left) and _simple(expr.right)
    if isinstance(expr, ast.Unary):
        return _simple(expr.operand)
    return False


def _produced_key(
    index: int,
) -> Callable[[tuple[list[object], list[object]]], tuple[int, object]]:
    """A sort key reading ORDER BY term ``index`` of a (values, order keys) pair."""
    return lambda produced: order_key(produced[1][index])


def _row_key(position: int) -> Callable[[Sequence[object]], tuple[int, object]]:
    """A sort key reading column ``position`` of a result row."""
    return lambda row: order_key(row[position])


def _limited(rows: list[list[object]], limit: object, offset: object) -> list[list[object]]:
    start = offset if isinstance(offset, int) else 0
    if isinstance(limit, int):
        return rows[start : start + limit]
    return rows[start:]


# ------------------------------------------------------------------ one SELECT
class QueryPlan:
    """One SELECT compiled: its sources, join steps, and every clause as closures."""

    def __init__(
        self, session: Session, stmt: ast.Select, shared: Shared, outer: Compiler | None
    ) -> None:
        self.session = session
        self.stmt = stmt
        self.shared = shared
        self.outer_width = outer.width if outer is not None else 0
        self._cache: list[list[object]] | None = None
        written = self._sources(stmt)
        self.steps = self._join_order(stmt, written)
        offset = 0
        for step in self.steps:
            step.source.offset = offset
            offset += len(step.source.names)
        self.written = written
        self.scope = Scope(
            [
                ScopeTable(
                    s.source.qualifier,
                    s.source.db,
                    s.source.names,
                    s.source.offset,
                    s.source.hidden,
                )
                for s in self.steps
            ],
            offset,
        )
        first = written[0].qualifier if written else ""
        compiler = Compiler((), first, session.context, self.scope, outer)
        compiler.subqueries = self._plan_subquery
        self.compiler = compiler
        self._compile_joins(stmt)
        self.first_where = self._first_table_where(stmt.where)
        where = self._residual(stmt.where)
        self.where = compiler.compile_in(dml.WHERE, where) if where is not None else None
        self.grouped = (
            bool(stmt.group_by)
            or has_aggregate(stmt.having)
            or any(has_aggregate(i.expr) for i in stmt.items)
            or any(has_aggregate(o.expr) for o in stmt.order_by)
        )
        """Whether rows are grouped; HAVING without grouping filters each row (as MySQL)."""
        self._compile_output(stmt)
        if stmt.lock is not None and (len(self.steps) != 1 or self.steps[0].source.table is None):
            raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"{stmt.lock} with several tables")

    # --- building -----------------------------------------------------------------------
    def _sources(self, stmt: ast.Select) -> list[_Source]:
        steps = stmt.joins or ((ast.JoinStep(stmt.table),) if stmt.table is not None else ())
        sources: list[_Source] = []
        seen: set[str] = set()
        for step in steps:
            source = self._source(step.source)
            key = source.qualifier.lower()
            if key in seen:
                raise MySQLError.of(ER_NONUNIQ_TABLE, source.qualifier)
            seen.add(key)
            sources.append(source)
        return sources

    def _source(self, item: ast.TableName | ast.DerivedTable) -> _Source:
        if isinstance(item, ast.DerivedTable):
            plan = build_plan(self.session, item.select, self.shared, None)
            return _Source(item.alias, None, plan.names(), derived=plan)
        table = dml.resolve_table(self.session, item)
        schema = table.schema
        return _Source(item.alias or item.name, schema.db, [c.name for c in schema.columns], table)

    def _join_order(self, stmt: ast.Select, sources: list[_Source]) -> list[_Step]:
        """The join's steps in execution order; ``a RIGHT JOIN b ON c`` runs as
        ``b LEFT JOIN a ON c``.
        """
        joins = stmt.joins or ((ast.JoinStep(stmt.table),) if stmt.table is not None else ())
        order = [
            (source, join.kind, join.on, join.using)
            for join, source in zip(joins, sources, strict=True)
        ]
        for index, (_, kind, _, _) in enumerate(order):
            if kind == "RIGHT" and index != 1:
                raise MySQLError.of(ER_NOT_SUPPORTED_YET, "RIGHT JOIN after other joins")
        if len(order) > 1 and order[1][1] == "RIGHT":
            (left, _, _, _), (right, _, on, using) = order[0], order[1]
            order[0:2] = [(right, "FIRST", None, ()), (left, "LEFT", on, using)]
        self.conditions = [(on, using) for _, _, on, using in order]
        for source, _, _, using in order:
            if using:
                source.hidden = frozenset(u.lower() for u in using)
        return [_Step(source, kind) for source, kind, _, _ in order]

    def _compile_joins(self, stmt: ast.Select) -> None:
        compiler, scope = self.compiler, self.scope
        where_terms = _conjuncts(stmt.where)
        inner_so_far = True
        for index, (step, (on, using)) in enumerate(zip(self.steps, self.conditions, strict=True)):
            if index == 0:
                continue
            if using:
                on = self._using_condition(index, using)
            scope.visible = index + 1
            try:
                if on is not None:
                    step.on = compiler.compile_in("on clause", on)
                inner_so_far = inner_so_far and step.kind == "INNER"
                terms = _conjuncts(on) + (where_terms if inner_so_far else [])
                step.lookup = self._lookup(index, terms)
            finally:
                scope.visible = len(self.steps)

    def _using_condition(self, index: int, using: tuple[str, ...]) -> ast.Expression:
        right = self.steps[index].source
        condition: ast.Expression | None = None
        for name in using:
            left = next(
                (
                    s.source
                    for s in self.steps[:index]
                    if name.lower() in (n.lower() for n in s.source.names)
                    and name.lower() not in s.source.hidden
                ),
                None,
            )
            if left is None or name.lower() not in (n.lower() for n in right.names):
                raise MySQLError.of(ER_BAD_FIELD_ERROR, name, "from clause")
            term = ast.Binary(
                "=", ast.Column(name, left.qualifier), ast.Column(name, right.qualifier)
            )
            condition = term if condition is None else ast.Binary("AND", condition, term)
        assert condition is not None
        return condition

    def _lookup(self, index: int, terms: list[ast.Expression]) -> list[Compiled] | None:
        """Closures computing step ``index``'s whole primary key from the rows before it,
        when equalities among ``terms`` fix it; else None (the table is scanned).
        """
        source = self.steps[index].source
        schema = source.schema
        if schema is None or not schema.primary_key:
            return None
        if any(schema.columns[p].type_name not in LOOKUP_TYPES for p in schema.pk_positions):
            return None
        wanted = {source.offset + p: n for n, p in enumerate(schema.pk_positions)}
        found: dict[int, Compiled] = {}
        compiler, scope = self.compiler, self.scope
        for term in terms:
            if not (isinstance(term, ast.Binary) and term.op == "="):
                continue
            for mine, other in ((term.left, term.right), (term.right, term.left)):
                if not isinstance(mine, ast.Column) or not _simple(other):
                    continue
                try:
                    scope.visible = index + 1
                    position = scope.find(mine, "on clause")
                    scope.visible = index
                    if position not in wanted or wanted[position] in found:
                        continue
                    found[wanted[position]] = compiler.compile_in("on clause", other)
                except MySQLError:
                    continue
                finally:
                    scope.visible = index + 1
        if len(found) != len(schema.pk_positions):
            return None
        return [found[n] for n in range(len(schema.pk_positions))]

    def _first_table_where(self, where: ast.Expression | None) -> ast.Expression | None:
        """The WHERE terms that read only FROM's first table (they may narrow its read)."""
        if not self.steps or self.steps[0].source.table is None or where is None:
            return None
        scope = self.scope
        kept: ast.Expression | None = None
        scope.visible = 1
        try:
            for term in _conjuncts(where):
                try:
                    columns = list(_bare_columns(term))
                    if not all(scope.find(c, dml.WHERE) is not None for c in columns):
                        continue
                except MySQLError:
                    continue
                kept = term if kept is None else ast.Binary("AND", kept, term)
        finally:
            scope.visible = len(self.steps)
        return kept

    def _residual(self, where: ast.Expression | None) -> ast.Expression | None:
        """What of WHERE the joined rows still need testing on: for one table whose read
        every term narrows, without the primary-key term the read guarantees
        (:func:`dml.residual_where`); else all of it.
        """
        first = self.first_where
        if len(self.steps) != 1 or first is None or self.steps[0].source.table is None:
            return where
        if len(_conjuncts(first)) != len(_conjuncts(where)):
            return where
        schema = self.steps[0].source.table.schema
        narrow = Compiler([c.name for c in schema.columns], schema.name, self.session.context)
        return dml.residual_where(schema, first, narrow)

    def _compile_output(self, stmt: ast.Select) -> None:
        compiler = self.compiler
        self.group_cell: list[Sequence[Row]] = [[]]
        if self.grouped:
            compiler.group = self.group_cell
        try:
            self.items: list[tuple[list[str], list[Compiled], list[int | None], bool]] = []
            for item in stmt.items:
                self.items.append(self._compile_item(item))
            aliases = {
                i.alias.lower(): i.expr
                for i in stmt.items
                if i.alias and isinstance(i.expr, ast.Expression)
            }
            self.having = (
                compiler.compile_in("having clause", _substitute(stmt.having, aliases))
                if stmt.having is not None
                else None
            )
            self.order = [self._order_key(o, aliases) for o in stmt.order_by]
        finally:
            compiler.group = None
        self.group_keys = [
            compiler.compile_in("group statement", self._group_expr(g.expr, stmt))
            for g in stmt.group_by
        ]
        if self.grouped:
            self._check_full_group_by(stmt)

    def _compile_item(
        self, item: ast.SelectItem
    ) -> tuple[list[str], list[Compiled], list[int | None], bool]:
        """(names, getters, the FROM position each reads when it is a bare column, is star)
        of one select-list item.
        """
        expr = item.expr
        if isinstance(expr, ast.Star):
            getters: list[Compiled] = []
            positions: list[int | None] = []
            names: list[str] = []
            sources = [
                s
                for s in self.written
                if expr.table is None or s.qualifier.lower() == expr.table.lower()
            ]
            if expr.table is not None and not sources:
                raise MySQLError.of(ER_BAD_TABLE_ERROR, expr.table)
            if not self.written:
                raise MySQLError.of(ER_NO_TABLES_USED)
            for source in sources:
                for index, name in enumerate(source.names):
                    if expr.table is None and name.lower() in source.hidden:
                        continue
                    getters.append(operator.itemgetter(source.offset + index))
                    positions.append(source.offset + index)
                    names.append(name)
            return names, getters, positions, True
        getter = self.compiler.compile_in(dml.FIELDS, expr)
        position = self.scope.find(expr, dml.FIELDS) if isinstance(expr, ast.Column) else None
        name = item.alias or expr.name if isinstance(expr, ast.Column) else dml.item_name(item)
        return [name], [getter], [position], False

    def _order_key(self, item: ast.OrderItem, aliases: dict[str, ast.Expression]) -> Compiled:
        expr = item.expr
        if isinstance(expr, ast.Literal) and isinstance(expr.value, int):
            position = expr.value - 1
            if not 0 <= position < len(self.items):
                raise MySQLError.of(ER_BAD_FIELD_ERROR, str(expr.value), "order clause")
            return self.items[position][1][0]
        return self.compiler.compile_in("order clause", _substitute(expr, aliases))

    def _group_expr(self, expr: ast.Expression, stmt: ast.Select) -> ast.Expression:
        """GROUP BY's ``n`` is the n-th select item; an alias names its item's expression
        when no table has a column of that name.
        """
        if isinstance(expr, ast.Literal) and isinstance(expr.value, int):
            position = expr.value - 1
            if not 0 <= position < len(stmt.items) or isinstance(
                stmt.items[position].expr, ast.Star
            ):
                raise MySQLError.of(ER_BAD_FIELD_ERROR, str(expr.value), "group statement")
            return stmt.items[position].expr  # type: ignore[return-value]
        if isinstance(expr, ast.Column) and expr.table is None:
            if self.scope.find(expr, "group statement") is None:
                for item in stmt.items:
                    if item.alias and item.alias.lower() == expr.name.lower():
                        return item.expr  # type: ignore[return-value]
        return expr

    def _check_full_group_by(self, stmt: ast.Select) -> None:
        """ONLY_FULL_GROUP_BY (in the default sql_mode), as MySQL checks the select list."""
        mode = str(self.session.variable("sql_mode", None)).upper()
        if "ONLY_FULL_GROUP_BY" not in mode:
            return
        scope = self.scope
        grouped: set[int] = set()
        for group_item in stmt.group_by:
            expr = self._group_expr(group_item.expr, stmt)
            if isinstance(expr, ast.Column):
                position = scope.find(expr, "group statement")
                if position is not None:
                    grouped.add(position)
        for number, item in enumerate(stmt.items, 1):
            columns = (
                [ast.Column(n, s.qualifier) for s in self.written for n in s.names]
                if isinstance(item.expr, ast.Star)
                else list(_bare_columns(item.expr))
            )
            for column in columns:
                position = scope.find(column, dml.FIELDS)
                if position is None or position in grouped or self._determined(position, grouped):
                    continue
                source = self._source_at(position)
                name = f"{source.db or ''}.{source.qualifier}.{column.name}"
                if not stmt.group_by:
                    raise MySQLError.of(ER_MIX_OF_GROUP_FUNC_AND_FIELDS_V2, number, name)
                raise MySQLError.of(ER_WRONG_FIELD_WITH_GROUP, number, name)

    def _source_at(self, position: int) -> _Source:
        for step in self.steps:
            if step.source.offset <= position < step.source.offset + len(step.source.names):
                return step.source
        raise AssertionError(position)

    def _determined(self, position: int, grouped: set[int]) -> bool:
        """Whether the grouped columns include the whole primary key of ``position``'s table."""
        source = self._source_at(position)
        schema = source.schema
        if schema is None or not schema.primary_key:
            return False
        return all(source.offset + p in grouped for p in schema.pk_positions)

    def _plan_subquery(self, select: Query, outer: Compiler) -> SubqueryRunner:
        return build_plan(self.session, select, self.shared, outer)

    # --- running ------------------------------------------------------------------------
    @property
    def width(self) -> int:
        """How many columns the query selects."""
        return sum(len(getters) for _, getters, _, _ in self.items)

    @property
    def correlated(self) -> bool:
        return self.compiler.correlated

    def names(self) -> list[str]:
        """The result's column names."""
        return [name for names, _, _, _ in self.items for name in names]

    def columns(self, rows: Sequence[Row]) -> list[Column]:
        """The result's column definitions: a table column's own, else by its values."""
        out: list[Column] = []
        names = self.names()
        for item, (_, _, positions, _) in zip(self.stmt.items, self.items, strict=True):
            for source_position in positions:
                index = len(out)
                name = names[index]
                if source_position is not None:
                    source = self._source_at(source_position)
                    meta = source.column_meta(source_position - source.offset, rows, index)
                    out.append(attrs.evolve(meta, name=name) if meta.name != name else meta)
                    continue
                value = next((r[index] for r in rows if r[index] is not None), None)
                if value is None and has_aggregate(item.expr):
                    value = 0
                out.append(column_for_value(name, value))
        return out

    def rows(self, outer: Row) -> list[list[object]]:
        """:meth:`run`, remembered for the statement unless the query is correlated."""
        if self._cache is not None:
            return self._cache
        result = self.run(outer)
        if not self.correlated:
            self._cache = result
        return result

    def run(self, outer: Row) -> list[list[object]]:
        """The query's result rows for the outer row ``outer`` (``()`` at the top)."""
        joined = self._joined(tuple(outer))
        where = self.where
        if where is not None:
            joined = [r for r in joined if truth(where(r))]
        if self.grouped:
            produced = self._grouped(joined, tuple(outer))
        else:
            having = self.having
            if having is not None:
                joined = [r for r in joined if truth(having(r))]
            produced = [self._project(r) for r in joined]
        if self.stmt.distinct:
            seen: dict[tuple[object, ...], tuple[list[object], list[object]]] = {}
            for values, keys in produced:
                seen.setdefault(tuple(values), (values, keys))
            produced = list(seen.values())
        for index in reversed(range(len(self.order))):
            descending = self.stmt.order_by[index].descending
            produced.sort(key=_produced_key(index), reverse=descending)
        return _limited([values for values, _ in produced], self.stmt.limit, self.stmt.offset)

    def _project(self, row: Row) -> tuple[list[object], list[object]]:
        values = [g(row) for _, getters, _, _ in self.items for g in getters]
        return values, [k(row) for k in self.order]

    def _grouped(
        self, rows: list[Row], outer: tuple[object, ...]
    ) -> list[tuple[list[object], list[object]]]:
        groups: dict[tuple[object, ...], list[Row]] = {}
        if self.group_keys:
            keys = self.group_keys
            for row in rows:
                groups.setdefault(tuple(k(row) for k in keys), []).append(row)
        else:
            groups[()] = rows
        cell, having = self.group_cell, self.having
        out: list[tuple[list[object], list[object]]] = []
        empty = (None,) * self.scope.width + outer
        for members in groups.values():
            cell[0] = members
            first = members[0] if members else empty
            if having is not None and not truth(having(first)):
                continue
            out.append(self._project(first))
        return out

    def _joined(self, outer: tuple[object, ...]) -> list[Row]:
        """Every row of FROM, the tables side by side, followed by ``outer``."""
        if not self.steps:
            return [outer]
        trx = self.shared.transaction()
        width = self.scope.width
        first = self.steps[0].source
        partial: list[tuple[object, ...]] = [tuple(r) for r in self._first_rows(trx, first)]
        for step in self.steps[1:]:
            partial = self._join_step(trx, step, partial, outer, width)
        if outer:
            return [p + outer for p in partial]
        return partial  # type: ignore[return-value]

    def _first_rows(self, trx: Transaction, source: _Source) -> Iterator[Row]:
        if source.derived is not None:
            yield from (tuple(r) for r in source.derived.run(()))
            return
        assert source.table is not None
        table = source.table
        schema = table.schema
        narrow = Compiler([c.name for c in schema.columns], schema.name, self.session.context)
        lock = self.stmt.lock is not None
        for key, row in dml.candidate_rows(trx, table, self.first_where, narrow):
            if lock:
                trx.lock_for_update(table, key)
                current = trx.get(table, key)
                if current is None:
                    continue
                row = current
            yield row

    def _join_step(
        self,
        trx: Transaction,
        step: _Step,
        partial: list[tuple[object, ...]],
        outer: tuple[object, ...],
        width: int,
    ) -> list[tuple[object, ...]]:
        source = step.source
        size = len(source.names)
        after = (None,) * (width - source.offset - size)
        before_pad = (None,) * (width - source.offset)
        nulls = (None,) * size
        on, lookup = step.on, step.lookup
        scanned: list[tuple[object, ...]] | None = None
        out: list[tuple[object, ...]] = []
        for left in partial:
            found = None
            if lookup is not None:
                probe = left + before_pad + outer
                found = self._lookup_rows(trx, source, [f(probe) for f in lookup])
            if found is not None:
                candidates = found
            else:
                if scanned is None:
                    scanned = self._all_rows(trx, source)
                candidates = scanned
            matched = False
            for inner in candidates:
                if on is not None and not truth(on(left + inner + after + outer)):
                    continue
                matched = True
                out.append(left + inner)
            if not matched and step.kind == "LEFT":
                out.append(left + nulls)
        return out

    def _all_rows(self, trx: Transaction, source: _Source) -> list[tuple[object, ...]]:
        if source.derived is not None:
            return [tuple(r) for r in source.derived.run(())]
        assert source.table is not None
        return [tuple(row) for _, row in trx.scan(source.table)]

    def _lookup_rows(
        self, trx: Transaction, source: _Source, values: list[object]
    ) -> list[tuple[object, ...]] | None:
        """The row with the primary key ``values``; None when a value has no exact key
        (a number for a string key: MySQL compares those as numbers), to scan instead.
        """
        assert source.table is not None
        schema = source.table.schema
        parts: list[object] = []
        for value, position in zip(values, schema.pk_positions, strict=True):
            part = _key_part(schema, position, value)
            if part is _SCAN:
                return None
            if part is None:
                return []
            parts.append(part)
        key = parts[0] if len(parts) == 1 else tuple(parts)
        row = trx.get(source.table, key)
        return [] if row is None else [tuple(row)]


_SCAN = object()
"""What :func:`_key_part` returns for a value no single key stands for."""
LOOKUP_TYPES = frozenset(
    ("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "CHAR", "VARCHAR")
)
"""Key column types a join looks rows up by (others are scanned)."""


def _key_part(schema: TableSchema, position: int, value: object) -> object:
    """``value`` as the engine keys column ``position``: None when no row can match (NULL,
    a fraction for an integer key), :data:`_SCAN` when only a scan can tell (a number for
    a string key).
    """
    if value is None:
        return None
    if schema.columns[position].type_name in ("CHAR", "VARCHAR"):
        return value if isinstance(value, str) else _SCAN
    number = to_number(value)
    return int(number) if number == int(number) else None


# ------------------------------------------------------------------ UNION
class UnionPlan:
    """``SELECT ... UNION [ALL] SELECT ...``: each SELECT's rows in turn, duplicates
    removed up to the last UNION DISTINCT, then ORDER BY (by position or the first
    SELECT's column names) and LIMIT over the whole.
    """

    def __init__(
        self, session: Session, stmt: ast.Union, shared: Shared, outer: Compiler | None
    ) -> None:
        self.stmt = stmt
        self.plans = [QueryPlan(session, s, shared, outer) for s in stmt.selects]
        self.width = self.plans[0].width
        if any(p.width != self.width for p in self.plans):
            raise MySQLError.of(ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT)
        names = [n.lower() for n in self.plans[0].names()]
        self.order: list[tuple[int, bool]] = []
        for item in stmt.order_by:
            expr = item.expr
            if isinstance(expr, ast.Literal) and isinstance(expr.value, int):
                position = expr.value - 1
            elif isinstance(expr, ast.Column) and expr.name.lower() in names:
                position = names.index(expr.name.lower())
            else:
                raise MySQLError.of(ER_BAD_FIELD_ERROR, ast.to_sql(expr), "order clause")
            if not 0 <= position < self.width:
                raise MySQLError.of(ER_BAD_FIELD_ERROR, ast.to_sql(expr), "order clause")
            self.order.append((position, item.descending))
        self._cache: list[list[object]] | None = None

    @property
    def correlated(self) -> bool:
        return any(p.correlated for p in self.plans)

    def names(self) -> list[str]:
        return self.plans[0].names()

    def columns(self, rows: Sequence[Row]) -> list[Column]:
        return self.plans[0].columns(rows)

    def rows(self, outer: Row) -> list[list[object]]:
        if self._cache is not None:
            return self._cache
        result = self.run(outer)
        if not self.correlated:
            self._cache = result
        return result

    def run(self, outer: Row) -> list[list[object]]:
        result = self.plans[0].run(outer)
        for plan, keep_all in zip(self.plans[1:], self.stmt.all, strict=True):
            result = result + plan.run(outer)
            if not keep_all:
                result = list({tuple(r): r for r in result}.values())
        for position, descending in reversed(self.order):
            result.sort(key=_row_key(position), reverse=descending)
        return _limited(result, self.stmt.limit, self.stmt.offset)


def _monitoring(plan: QueryPlan | UnionPlan) -> bool:
    """Whether ``plan`` reads only tables of the monitoring schemas (no ``begin`` hook)."""
    if isinstance(plan, UnionPlan):
        return all(_monitoring(p) for p in plan.plans)
    return bool(plan.steps) and all(
        s.source.derived is None
        and (s.source.db or "").lower() in virtual_tables.MONITORING_SCHEMAS
        for s in plan.steps
    )
