"""SELECT, INSERT, REPLACE, UPDATE and DELETE against the engine.

Row access: a WHERE clause that pins the primary key (``pk = v``, ``pk IN (...)``,
``pk BETWEEN a AND b``, possibly ANDed with other conditions) reads only those keys;
anything else scans the table in key order. The whole WHERE is still evaluated on
every row read, so the shortcut can only narrow, never change, the result.

Writes lock each row (exclusive, until the transaction ends) and then evaluate the
WHERE clause again on the row's latest committed version, as InnoDB's
semi-consistent read does under READ COMMITTED: an UPDATE never overwrites a change
it did not see.
"""

from __future__ import annotations

import datetime
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import cast

import attrs

from rpl.core.engine import NO_DEFAULT, ColumnSchema, Table, TableSchema, Transaction
from rpl.core.engine import Row as EngineRow
from rpl.core.engine.coercion import coerce_leniently
from rpl.core.engine.memo import SchemaMemo
from rpl.core.errors import (
    ER_BAD_FIELD_ERROR,
    ER_DUP_ENTRY,
    ER_FIELD_SPECIFIED_TWICE,
    ER_NO_DB_ERROR,
    ER_NO_DEFAULT_FOR_FIELD,
    ER_WRONG_VALUE_COUNT_ON_ROW,
    MySQLError,
)
from rpl.core.execution import virtual_tables
from rpl.core.execution.expressions import (
    Compiled,
    Compiler,
    Context,
    Scope,
    ScopeTable,
    SubqueryRunner,
    to_number,
    truth,
)
from rpl.core.execution.results import Ok, Result, Rows
from rpl.core.execution.session import Session
from rpl.core.execution.upsert import NEW_ROW, values_function
from rpl.core.execution.values import column_type
from rpl.core.net.responses import Column, column_for_value
from rpl.core.sql import ast

Row = Sequence[object]
SubqueryPlanner = Callable[[ast.Select | ast.Union, Compiler], SubqueryRunner]
"""What plans a statement's subqueries (execution.query gives one)."""
FIELDS = "field list"
WHERE = "where clause"


def resolve_table(session: Session, name: ast.TableName) -> Table:
    """The engine table a statement names (ER_NO_DB_ERROR without a database)."""
    db = name.schema or session.db
    if db is None:
        raise MySQLError.of(ER_NO_DB_ERROR)
    if db.lower() in virtual_tables.SCHEMAS:
        return session.server.dispatch.virtual_tables.table(session, db, name.name)
    return session.server.engine.table(db, name.name)


@attrs.frozen
class KeyRange:
    """A primary-key range a WHERE clause narrows a read to: every ``lows`` pair is a lower
    bound (constant, strict), every ``highs`` pair an upper one (none: open). An integer key
    reads exactly the range (``pk > 2.5`` from 3); a string key reads strict bounds as
    inclusive, so its range may hold more than the WHERE, never less.
    """

    lows: tuple[tuple[object, bool], ...] = ()
    highs: tuple[tuple[object, bool], ...] = ()


_RANGE_OPS = {">": "low", ">=": "low", "<": "high", "<=": "high"}
_FLIPPED = {">": "<", ">=": "<=", "<": ">", "<=": ">="}


def pk_keys(
    schema: TableSchema, where: ast.Expression | None, compiler: Compiler
) -> list[object] | KeyRange | None:
    """Keys or a key range the WHERE clause pins, or None for a full scan.

    Of an AND, the first term (left to right) giving a key list wins; else the ranges of
    all its terms are intersected.
    """
    if where is None or len(schema.primary_key) != 1:
        return None
    pk = schema.primary_key[0].lower()

    def is_pk(expr: ast.Expression) -> bool:
        return isinstance(expr, ast.Column) and expr.name.lower() == pk

    constant = compiler.evaluate

    if isinstance(where, ast.Binary):
        if where.op == "AND":
            left = pk_keys(schema, where.left, compiler)
            if isinstance(left, list):
                return left
            right = pk_keys(schema, where.right, compiler)
            if isinstance(right, list) or left is None:
                return right
            if right is None:
                return left
            return KeyRange(left.lows + right.lows, left.highs + right.highs)
        if where.op == "=" and is_pk(where.left) and _is_constant(where.right):
            return _point_keys(schema, [constant(where.right)])
        if where.op == "=" and is_pk(where.right) and _is_constant(where.left):
            return _point_keys(schema, [constant(where.left)])
        if where.op in _RANGE_OPS:
            op, other = where.op, where.right
            if not is_pk(where.left):
                op, other = _FLIPPED[where.op], where.left
                if not is_pk(where.right):
                    return None
            if not _range_constant(schema, other):
                return None
            bound = ((constant(other), len(op) == 1),)
            if _RANGE_OPS[op] == "low":
                return KeyRange(lows=bound)
            return KeyRange(highs=bound)
    if (
        isinstance(where, ast.InList)
        and not where.negated
        and is_pk(where.operand)
        and all(_is_constant(i) for i in where.items)
    ):
        return _point_keys(schema, [constant(i) for i in where.items])
    if (
        isinstance(where, ast.Between)
        and not where.negated
        and is_pk(where.operand)
        and _range_constant(schema, where.low)
        and _range_constant(schema, where.high)
    ):
        return KeyRange(((constant(where.low), False),), ((constant(where.high), False),))
    return None


def _key_kind(schema: TableSchema) -> str | None:
    """How the one-column primary key's values are keyed for reads narrowed by constants:
    ``"integer"``, ``"text"`` (CHAR, VARCHAR, TEXT: the engine's keys are the strings), or
    None for every other type (DECIMAL, FLOAT, DOUBLE, the temporal and binary types...):
    MySQL compares those with a constant after converting the constant to the column's
    type, which a key lookup by the constant's own value would not do, so they are scanned.
    """
    type_name = schema.columns[schema.pk_positions[0]].type_name
    if type_name in _INTEGER_TYPES:
        return "integer"
    if type_name in _TEXT_TYPES:
        return "text"
    return None


def _point_keys(schema: TableSchema, values: list[object]) -> list[object] | None:
    """``values`` as the keys to read, or None (scan) when some value has no key that stands
    for exactly the rows it equals: any value has one for an integer key (a number, or a
    string MySQL reads as one; a fraction or NULL equals no row); for a text key only a
    string (or NULL) has one, since MySQL compares a string column with a number as numbers
    (``id = 5`` is true of ``'5'``, ``'05'``, ``' 5'`` and ``'5.0'``).
    """
    kind = _key_kind(schema)
    if kind == "integer":
        return values
    if kind == "text" and all(v is None or isinstance(v, str) for v in values):
        return values
    return None


def _range_constant(schema: TableSchema, expr: ast.Expression) -> bool:
    """A constant a key range may be bounded by: any for an integer key; for a text key
    only a string literal (MySQL compares a string column with a number as numbers, in
    another order than the keys'); none for any other key type (:func:`_key_kind`).
    """
    kind = _key_kind(schema)
    if kind == "integer":
        return _is_constant(expr)
    return kind == "text" and isinstance(expr, ast.Literal) and isinstance(expr.value, str)


def _bound(schema: TableSchema, bound: tuple[object, bool], low: bool) -> object:
    """A range bound as the engine keys it, inclusive: for an integer key the first (or
    last) whole number the comparison admits; None for NULL (no row compares true with it).
    """
    value, strict = bound
    if value is None:
        return None
    if schema.columns[schema.pk_positions[0]].type_name not in _INTEGER_TYPES:
        return str(value)
    number = to_number(value)
    if low:
        return math.floor(number) + 1 if strict else math.ceil(number)
    return math.ceil(number) - 1 if strict else math.floor(number)


def _is_constant(expr: ast.Expression) -> bool:
    return isinstance(expr, ast.Literal | ast.UserVar) or (
        isinstance(expr, ast.Unary) and isinstance(expr.operand, ast.Literal)
    )


def _key_for(schema: TableSchema, value: object) -> object:
    """``value`` (one :func:`_point_keys` kept) as the engine keys the primary key column;
    None where no key can equal it (NULL, or a fraction for an integer key).
    """
    if value is None:
        return None
    if _key_kind(schema) == "text":
        return value
    number = to_number(value)
    return int(number) if number == int(number) else None


_INTEGER_TYPES = frozenset(("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT"))
_TEXT_TYPES = frozenset(("CHAR", "VARCHAR", "TEXT"))


def _guaranteed(schema: TableSchema, expr: ast.Expression) -> bool:
    """Whether reading the keys ``expr`` pins (:func:`pk_keys`) already makes ``expr``
    true for every row read: ``pk = c``, ``pk IN (c, ...)``, ``pk BETWEEN a AND b`` and,
    for an integer key, ``pk < c`` (``<=``, ``>``, ``>=``), with literal constants that the
    key conversion (:func:`_key_for`, :func:`_bound`) maps exactly as MySQL's comparison
    does: numbers or strings against an integer key, strings against a string key.
    """
    if len(schema.primary_key) != 1:
        return False
    column = schema.columns[schema.pk_positions[0]]
    numeric = column.type_name in _INTEGER_TYPES
    if not numeric and column.type_name not in ("CHAR", "VARCHAR"):
        return False
    pk = schema.primary_key[0].lower()

    def is_pk(node: ast.Expression) -> bool:
        return isinstance(node, ast.Column) and node.name.lower() == pk

    def exact(node: ast.Expression) -> bool:
        if not isinstance(node, ast.Literal) or node.value is None:
            return False
        value = node.value
        if numeric:
            return isinstance(value, int | str | Decimal | float) and (
                _key_for(schema, value) is not None
            )
        return isinstance(value, str)

    if isinstance(expr, ast.Binary) and expr.op == "=":
        return (is_pk(expr.left) and exact(expr.right)) or (is_pk(expr.right) and exact(expr.left))
    if isinstance(expr, ast.InList) and not expr.negated:
        return is_pk(expr.operand) and all(exact(i) for i in expr.items)
    if isinstance(expr, ast.Between) and not expr.negated:
        bounds = (expr.low, expr.high)
        return is_pk(expr.operand) and all(_exact_bound(numeric, b) for b in bounds)
    if isinstance(expr, ast.Binary) and expr.op in _RANGE_OPS and numeric:
        return (is_pk(expr.left) and _exact_bound(numeric, expr.right)) or (
            is_pk(expr.right) and _exact_bound(numeric, expr.left)
        )
    return False


def _exact_bound(numeric: bool, node: ast.Expression) -> bool:
    """A literal a range read bounds exactly: a number or string for an integer key (read
    from its first admitted whole number), a string for a string key.
    """
    if not isinstance(node, ast.Literal) or node.value is None:
        return False
    if numeric:
        return isinstance(node.value, int | str | Decimal | float)
    return isinstance(node.value, str)


def residual_where(
    schema: TableSchema, where: ast.Expression | None, compiler: Compiler
) -> ast.Expression | None:
    """What of ``where`` still needs testing on the rows :func:`candidate_rows` reads:
    ``where`` without the primary-key terms the read already guarantees
    (:func:`_guaranteed`): the key list it read, or every range it intersected. A sysbench
    range of 100 rows then tests no row at all.
    """
    if where is None or _guaranteed(schema, where):
        return None  # one term the read guarantees (a point select's WHERE)
    keys = pk_keys(schema, where, compiler)
    if keys is None:
        return where
    terms = conjuncts(where)
    if isinstance(keys, list):
        read = next(t for t in terms if isinstance(pk_keys(schema, t, compiler), list))
        kept = [t for t in terms if t is not read or not _guaranteed(schema, t)]
    else:
        kept = [
            t
            for t in terms
            if not (isinstance(pk_keys(schema, t, compiler), KeyRange) and _guaranteed(schema, t))
        ]
    residual: ast.Expression | None = None
    for term in kept:
        residual = term if residual is None else ast.Binary("AND", residual, term)
    return residual


def conjuncts(expr: ast.Expression) -> list[ast.Expression]:
    """The terms of a chain of ANDs, left to right."""
    if isinstance(expr, ast.Binary) and expr.op == "AND":
        return conjuncts(expr.left) + conjuncts(expr.right)
    return [expr]


def candidate_rows(
    trx: Transaction, table: Table, where: ast.Expression | None, compiler: Compiler
) -> Iterator[tuple[object, Row]]:
    """(key, row) pairs that may match ``where`` (narrowed by the primary key)."""
    keys = pk_keys(table.schema, where, compiler)
    if isinstance(keys, list):
        for value in dict.fromkeys(_key_for(table.schema, k) for k in keys):
            if value is None:
                continue
            row = trx.get(table, value)
            if row is not None:
                yield value, row
    elif isinstance(keys, KeyRange):
        schema = table.schema
        lows = [_bound(schema, k, True) for k in keys.lows]
        highs = [_bound(schema, k, False) for k in keys.highs]
        if None in lows or None in highs:
            return
        low = max(lows) if lows else None  # type: ignore[type-var]
        high = min(highs) if highs else None  # type: ignore[type-var]
        if low is None or high is None or low <= high:  # type: ignore[operator]
            yield from trx.scan(table, low, high)
    else:
        yield from trx.scan(table)


def matching(
    trx: Transaction, table: Table, where: ast.Expression | None, compiler: Compiler
) -> Iterator[tuple[object, Row]]:
    """(key, row) pairs satisfying ``where``."""
    residual = residual_where(table.schema, where, compiler)
    test = compiler.compile_in(WHERE, residual) if residual is not None else None
    for key, row in candidate_rows(trx, table, where, compiler):
        if test is None or truth(test(row)):
            yield key, row


# ------------------------------------------------------------------ SELECT
def run_select(session: Session, stmt: ast.Select) -> Result:
    """SELECT of at most one table, without grouping, aggregates or subqueries: the fast
    path (execution.query runs the rest and sends these here).
    """
    if stmt.table is None:
        compiler = Compiler((), "", session.context)
        values = [_item_function(compiler, item)(()) for item in stmt.items]
        columns = [
            column_for_value(item_name(i), v) for i, v in zip(stmt.items, values, strict=True)
        ]
        return Rows(columns, [] if stmt.limit == 0 else [values])
    table = resolve_table(session, stmt.table)

    def body(trx: Transaction) -> Result:
        return _select_from(session, trx, table, stmt)

    db = (stmt.table.schema or session.db or "").lower()
    return session.run_statement(body, monitoring=db in virtual_tables.MONITORING_SCHEMAS)


def item_name(item: ast.SelectItem) -> str:
    """The result column's name: the alias, a string literal's value, or the item's text."""
    if item.alias:
        return item.alias
    if isinstance(item.expr, ast.Literal) and isinstance(item.expr.value, str):
        return item.expr.value
    return item.text


def _item_function(compiler: Compiler, item: ast.SelectItem) -> Compiled:
    if isinstance(item.expr, ast.Star):
        raise MySQLError.of(ER_NO_DB_ERROR)
    return compiler.compile_in(FIELDS, item.expr)


def _select_from(session: Session, trx: Transaction, table: Table, stmt: ast.Select) -> Result:
    schema = table.schema
    compiler: Compiler | None = None
    rows: list[Row] = []
    where = stmt.where
    point = _integer_point(schema, where)
    if point is not _NO_POINT:
        # an integer primary key's point read (WHERE id = 5), or a WHERE no row can match
        # (the PREPARE probe's WHERE FALSE): what matching() would yield, without compiling
        found = None if point is None else trx.get(table, point)
        targets: Iterator[tuple[object, Row]] | list[tuple[object, Row]] = (
            [] if found is None else [(point, found)]
        )
    else:
        compiler = Compiler([c.name for c in schema.columns], schema.name, session.context)
        targets = matching(trx, table, where, compiler)
    for key, row in targets:
        if stmt.lock is not None:
            trx.lock_for_update(table, key)
            current = trx.get(table, key)
            if current is None:
                continue
            row = current
        rows.append(row)
    if stmt.order_by:
        if compiler is None:
            compiler = Compiler([c.name for c in schema.columns], schema.name, session.context)
        rows = _ordered(rows, stmt.order_by, compiler)
    plain = _plain_projections.get(schema, stmt.items)
    if plain is not None:
        columns: Sequence[Column] = plain.columns
        positions = plain.positions
        out: list[list[object]] = [[r[p] for p in positions] for r in rows]
    else:
        if compiler is None:
            compiler = Compiler([c.name for c in schema.columns], schema.name, session.context)
        named, getters = _projection(stmt.items, schema, compiler)
        out = [[g(r) for g in getters] for r in rows]
    if stmt.distinct:
        out = list({tuple(r): r for r in out}.values())
    out = _limited(out, stmt.limit, stmt.offset)
    return Rows(columns if plain is not None else _typed(named, out), out)


_NO_POINT = object()
"""What :func:`_integer_point` returns for a WHERE it does not read by itself."""


def _integer_point(schema: TableSchema, where: ast.Expression | None) -> object:
    """The primary key value a WHERE of a single ``pk = <integer literal>`` term (either
    side) reads, when the table's one-column primary key is an integer column; None for a
    WHERE no row can match (a literal FALSE, 0 or NULL, as the PREPARE probe's); otherwise
    :data:`_NO_POINT` (:func:`matching` reads it).

    The fast path of a point select: the integer literal is the engine's key as it is
    (MySQL compares an integer column with an integer exactly), so nothing of the WHERE
    remains to test and no compiler is needed. Any other term, type or spelling (a string,
    a decimal, TRUE, a qualified column, a composite key) goes the general way.
    """
    if type(where) is ast.Literal:
        value = where.value
        nothing = value is None or value is False or (type(value) is int and not value)
        return None if nothing else _NO_POINT
    if type(where) is not ast.Binary or where.op != "=" or len(schema.pk_positions) != 1:
        return _NO_POINT
    left, right = where.left, where.right
    if type(left) is ast.Literal:
        left, right = right, left
    if type(left) is not ast.Column or type(right) is not ast.Literal:
        return _NO_POINT
    value = right.value
    if type(value) is not int or left.table is not None:
        return _NO_POINT
    column = schema.columns[schema.pk_positions[0]]
    if column.type_name not in _INTEGER_TYPES or left.name.lower() != column.name.lower():
        return _NO_POINT
    return value


class _PlainProjection:
    """A select list of table columns and ``*`` alone, worked out for one table definition:
    each result column's definition and the row position it reads.
    """

    __slots__ = ("columns", "positions")

    def __init__(self, columns: tuple[Column, ...], positions: tuple[int, ...]) -> None:
        self.columns = columns
        self.positions = positions


class _ProjectionMemo:
    """:class:`_PlainProjection` by (table definition, select list), both by identity.

    A text statement of a known shape and every execution of a prepared statement share
    one select-list tuple, so a lookup is a dict access and two identity tests; an entry
    holds its schema and select list, so their ids cannot be reused while it lives, and
    DDL makes a new schema object (ALTER TABLE, RENAME, DROP + CREATE), so nothing worked
    out for an old definition is returned for a new one. None for a select list with
    anything but columns and ``*`` (computed each time by :func:`_projection`); an
    unknown column raises, and nothing is kept.
    """

    def __init__(self, kept: int = 1024) -> None:
        self._kept = kept
        self._entries: dict[
            tuple[int, int],
            tuple[TableSchema, tuple[ast.SelectItem, ...], _PlainProjection | None],
        ] = {}

    def get(
        self, schema: TableSchema, items: tuple[ast.SelectItem, ...]
    ) -> _PlainProjection | None:
        entry = self._entries.get((id(schema), id(items)))
        if entry is not None and entry[0] is schema and entry[1] is items:
            return entry[2]
        value = _plain_projection(schema, items)
        if len(self._entries) >= self._kept:
            self._entries.clear()
        self._entries[(id(schema), id(items))] = (schema, items, value)
        return value

    def __len__(self) -> int:
        return len(self._entries)


def _plain_projection(
    schema: TableSchema, items: tuple[ast.SelectItem, ...]
) -> _PlainProjection | None:
    if not all(type(item.expr) is ast.Column or type(item.expr) is ast.Star for item in items):
        return None
    compiler = Compiler([c.name for c in schema.columns], schema.name, _NO_CONTEXT)
    named, _ = _projection(items, schema, compiler)
    columns = tuple(cast(Column, c) for c in named)
    positions: list[int] = []
    for item in items:
        if type(item.expr) is ast.Star:
            positions.extend(range(len(schema.columns)))
        else:
            compiler.clause = FIELDS
            positions.append(compiler.column_position(cast(ast.Column, item.expr)))
    return _PlainProjection(columns, tuple(positions))


_NO_CONTEXT = Context()
"""The context a plain select list is compiled in: columns read nothing else."""
_plain_projections = _ProjectionMemo()
"""Each table definition's plain select lists."""


def _typed(columns: list[Column | str], rows: list[list[object]]) -> list[Column]:
    """The result's columns: a table column's own type; an expression's (given by its
    name) the type of its first non-NULL value, as MySQL types ``n + 1`` BIGINT (text
    when every value is NULL).
    """
    typed: list[Column] = []
    for index, column in enumerate(columns):
        if isinstance(column, Column):
            typed.append(column)
            continue
        value = next((r[index] for r in rows if r[index] is not None), None)
        typed.append(Column(column) if value is None else column_for_value(column, value))
    return typed


def _ordered(rows: list[Row], order: Sequence[ast.OrderItem], compiler: Compiler) -> list[Row]:
    for item in reversed(order):
        key = compiler.compile_in("order clause", item.expr)

        def sort_key(row: Row, key: Compiled = key) -> tuple[int, object]:
            value = key(row)
            if value is None:
                return (0, 0)
            return (1, value if isinstance(value, str | bytes) else to_number(value))

        rows = sorted(rows, key=sort_key, reverse=item.descending)
    return rows


def _limited(rows: list[list[object]], limit: object, offset: object) -> list[list[object]]:
    start = offset if isinstance(offset, int) else 0
    if isinstance(limit, int):
        return rows[start : start + limit]
    return rows[start:]


def _projection(
    items: Sequence[ast.SelectItem], schema: TableSchema, compiler: Compiler
) -> tuple[list[Column | str], list[Compiled]]:
    """Each result column (a table column's definition, or an expression's name for
    :func:`_typed`) and the function reading it from a row.
    """
    columns: list[Column | str] = []
    getters: list[Compiled] = []
    for item in items:
        if isinstance(item.expr, ast.Star):
            for i, col in enumerate(schema.columns):
                columns.append(column_type(col, schema))
                getters.append(operator.itemgetter(i))
            continue
        getters.append(compiler.compile_in(FIELDS, item.expr))
        if isinstance(item.expr, ast.Column):
            col = schema.columns[compiler.column_position(item.expr)]
            columns.append(column_type(col, schema, item.alias or item.expr.name))
        else:
            columns.append(item_name(item))
    return columns, getters


# ------------------------------------------------------------------ INSERT
def run_insert(
    session: Session, stmt: ast.Insert, subqueries: SubqueryPlanner | None = None
) -> Result:
    """INSERT / REPLACE with VALUES or SET (``... SELECT`` is execution.query's);
    ``subqueries`` plans the subqueries of its values.
    """
    table = resolve_table(session, stmt.table)
    compiler = Compiler((), "", session.context)
    compiler.subqueries = subqueries
    values = [
        [compiler.evaluate(e) if not isinstance(e, ast.Default) else _DEFAULT for e in row]
        for row in stmt.rows
    ]
    on_duplicate = on_duplicate_update(session, table.schema, stmt.on_duplicate)

    def body(trx: Transaction) -> Result:
        return insert_rows(session, trx, table, stmt, values, on_duplicate)

    return session.run_statement(body)


def insert_rows(
    session: Session,
    trx: Transaction,
    table: Table,
    stmt: ast.Insert,
    values: Sequence[Sequence[object]],
    on_duplicate: Callable[[Row, Row], dict[str, object]] | None = None,
) -> Ok:
    """Insert ``values`` (one list per row, in the statement's column order; DEFAULT as
    the marker) as INSERT [IGNORE] / REPLACE / ON DUPLICATE KEY UPDATE does.
    """
    schema = table.schema
    plan = _plans.get(schema, tuple(stmt.columns))
    rows = [_insert_row(schema, plan, list(v), number) for number, v in enumerate(values, 1)]
    if stmt.ignore:
        rows = [
            _lenient_row(session, schema, plan.positions, row, number)
            for number, row in enumerate(rows, 1)
        ]
    affected, first_id, duplicates = 0, 0, 0
    for number, row in enumerate(rows, 1):
        generated = (
            schema.auto_increment_position is not None and not row[schema.auto_increment_position]
        )
        try:
            key = trx.insert(table, row, row_number=number)
        except MySQLError as exc:
            if exc.errno != ER_DUP_ENTRY.errno or not (stmt.replace or stmt.ignore or on_duplicate):
                raise
            duplicates += 1
            if on_duplicate is not None:
                affected += _update_duplicate(
                    trx, table, row, on_duplicate, number, session.found_rows
                )
                continue
            if stmt.ignore:
                session.warn(exc)
                continue
            for existing in trx.duplicates(table, row):  # REPLACE: every conflicting row goes
                trx.delete(table, existing)
                affected += 1
            key = trx.insert(table, row, row_number=number)
        affected += 1
        if generated and not first_id:
            first_id = (
                int(key)
                if isinstance(key, int)
                else int(key[schema.primary_key.index(schema.auto_increment_column)])
            )
    if first_id:
        session.last_insert_id = first_id
    info = (
        f"Records: {len(rows)}  Duplicates: {duplicates}  Warnings: {len(session.warnings)}"
        if len(rows) > 1 or stmt.select is not None
        else ""
    )
    return Ok(affected, first_id, info)


def on_duplicate_update(
    session: Session, schema: TableSchema, assignments: Sequence[ast.Assignment]
) -> Callable[[Row, Row], dict[str, object]] | None:
    """ON DUPLICATE KEY UPDATE compiled: (existing row, proposed row) -> the changes.

    Assignments see the existing row's columns, ``VALUES(col)`` the proposed row's, and
    each assignment sees the ones before it, as MySQL evaluates them left to right.
    """
    if not assignments:
        return None
    names = [c.name for c in schema.columns]
    width = len(names)
    scope = Scope(
        [
            ScopeTable(schema.name, schema.db, names, 0),
            ScopeTable(NEW_ROW, None, names, width, frozenset(n.lower() for n in names)),
        ],
        2 * width,
    )
    compiler = Compiler((), schema.name, session.context, scope)
    setters: list[tuple[int, str, Compiled]] = []
    for assignment in assignments:
        compiler.clause = FIELDS
        position = compiler.column_position(ast.Column(assignment.column.name))
        value = compiler.compile(values_function(assignment.value))
        setters.append((position, schema.columns[position].name, value))

    def changes(existing: Row, proposed: Row) -> dict[str, object]:
        row = list(existing) + list(proposed)
        out: dict[str, object] = {}
        for position, name, value in setters:
            row[position] = out[name] = value(row)
        return out

    return changes


def _update_duplicate(
    trx: Transaction,
    table: Table,
    row: Row,
    on_duplicate: Callable[[Row, Row], dict[str, object]],
    number: int,
    found_rows: bool,
) -> int:
    """The row ``row`` first collides with (on the PRIMARY KEY, then each UNIQUE index in
    the table's order, as MySQL picks it) updated as ON DUPLICATE KEY UPDATE says: 2 rows
    affected when it changed, 0 when it did not (1 under CLIENT_FOUND_ROWS), MySQL's count.
    """
    key = trx.duplicates(table, row)[0]  # the first collision: PRIMARY, then each UNIQUE
    existing = trx.lock_for_update(table, key)
    if existing is None:
        return 0
    change = trx.update(
        table,
        key,
        on_duplicate(existing, row),
        row_number=number,
        touch=update_timestamps(table.schema),
    )
    if change is not None and change.before != change.after:
        return 2
    return 1 if found_rows else 0


class _DefaultMarker:
    pass


_DEFAULT = _DefaultMarker()


class _InsertPlan:
    """What an INSERT's column list means for one table, worked out once: the row index
    of each value, whether they are all the columns in table order, and the first
    column left out that can take no default (ER_NO_DEFAULT_FOR_FIELD unless a value is
    DEFAULT, which :func:`_insert_row` then checks the long way).
    """

    def __init__(self, schema: TableSchema, columns: Sequence[str]) -> None:
        self.positions = _insert_positions(schema, columns)
        self.in_order = self.positions == list(range(len(schema.columns)))
        given = set(self.positions)
        self.missing: str | None = next(
            (
                column.name
                for i, column in enumerate(schema.columns)
                if i not in given and _needs_value(column)
            ),
            None,
        )


_plans: SchemaMemo[tuple[str, ...], _InsertPlan] = SchemaMemo(_InsertPlan)
"""Each table definition's plan per INSERT column list."""


def _needs_value(column: ColumnSchema) -> bool:
    """A column an INSERT must give: NOT NULL, no DEFAULT, not AUTO_INCREMENT."""
    return (
        column.default is NO_DEFAULT
        and not column.nullable
        and not column.auto_increment
        and not column.default_now
    )


def _now(column: ColumnSchema) -> datetime.datetime:
    """CURRENT_TIMESTAMP for ``column``: now, to its fractional-second digits."""
    moment = datetime.datetime.now()
    digits = column.length or 0
    return moment.replace(microsecond=moment.microsecond // 10 ** (6 - digits) * 10 ** (6 - digits))


def update_timestamps(schema: TableSchema) -> dict[str, object] | None:
    """The ON UPDATE CURRENT_TIMESTAMP columns of ``schema`` with the time to set, for
    :meth:`Transaction.update`'s ``touch`` (None when there is none).
    """
    touched: dict[str, object] = {c.name: _now(c) for c in schema.columns if c.on_update_now}
    return touched or None


def _insert_positions(schema: TableSchema, columns: Sequence[str]) -> list[int]:
    if not columns:
        return list(range(len(schema.columns)))
    lookup = {c.name.lower(): i for i, c in enumerate(schema.columns)}
    positions = []
    for name in columns:
        position = lookup.get(name.lower())
        if position is None:
            raise MySQLError.of(ER_BAD_FIELD_ERROR, name, "field list")
        if position in positions:
            raise MySQLError.of(ER_FIELD_SPECIFIED_TWICE, name)
        positions.append(position)
    return positions


def _lenient_row(
    session: Session,
    schema: TableSchema,
    positions: list[int],
    row: tuple[object, ...],
    number: int,
) -> tuple[object, ...]:
    """INSERT IGNORE: the given values adjusted as MySQL does outside strict mode, each
    adjustment a warning (see :func:`coerce_leniently`).
    """
    out = list(row)
    for position in positions:
        column = schema.columns[position]
        if column.auto_increment and not out[position]:
            continue  # generated by the engine
        out[position], warning = coerce_leniently(column, out[position], number)
        if warning is not None:
            session.warn(warning)
    return tuple(out)


def _insert_row(
    schema: TableSchema, plan: _InsertPlan, values: list[object], number: int
) -> tuple[object, ...]:
    positions = plan.positions
    if len(values) != len(positions):
        raise MySQLError.of(ER_WRONG_VALUE_COUNT_ON_ROW, number)
    if not any(value is _DEFAULT for value in values):
        if plan.missing is not None:
            raise MySQLError.of(ER_NO_DEFAULT_FOR_FIELD, plan.missing)
        if plan.in_order:
            return tuple(values)
    row: list[object] = list(schema.default_row)
    given = set()
    for position, value in zip(positions, values, strict=True):
        if value is not _DEFAULT:
            row[position] = value
            given.add(position)
    for i, column in enumerate(schema.columns):
        if i in given:
            continue
        if _needs_value(column):
            raise MySQLError.of(ER_NO_DEFAULT_FOR_FIELD, column.name)
        if column.default_now:
            row[i] = _now(column)
    return tuple(row)


# ---------------------------------------------------------- UPDATE / DELETE
def _write_targets(
    session: Session,
    trx: Transaction,
    table: Table,
    where: ast.Expression | None,
    order_by: Sequence[ast.OrderItem],
    limit: object,
    compiler: Compiler,
) -> Iterator[tuple[object, Row]]:
    """Rows to change, each locked and re-checked against its latest version."""
    residual = residual_where(table.schema, where, compiler)
    test = compiler.compile_in(WHERE, residual) if residual is not None else None
    candidates = list(candidate_rows(trx, table, where, compiler))
    if order_by:
        ordered = _ordered([r for _, r in candidates], order_by, compiler)
        candidates = [(table.schema.key_of(cast(EngineRow, r)), r) for r in ordered]
    count = 0
    for key, _ in candidates:
        if isinstance(limit, int) and count >= limit:
            return
        trx.lock_for_update(table, key)
        row = trx.get(table, key)
        if row is None or (test is not None and not truth(test(row))):
            continue
        count += 1
        yield key, row


def run_update(
    session: Session, stmt: ast.Update, subqueries: SubqueryPlanner | None = None
) -> Result:
    """Single-table UPDATE; ``subqueries`` plans the subqueries of its SET and WHERE."""
    table = resolve_table(session, stmt.table)
    schema = table.schema
    compiler = Compiler([c.name for c in schema.columns], schema.name, session.context)
    compiler.subqueries = subqueries
    setters: list[tuple[int, Compiled | None]] = []
    for assignment in stmt.assignments:
        compiler.clause = FIELDS
        position = compiler.column_position(assignment.column)
        value = (
            None
            if isinstance(assignment.value, ast.Default)
            else compiler.compile(assignment.value)
        )
        compiler.clause = None
        setters.append((position, value))

    touch = update_timestamps(schema)

    def body(trx: Transaction) -> Result:
        matched = changed = 0
        targets = list(
            _write_targets(session, trx, table, stmt.where, stmt.order_by, stmt.limit, compiler)
        )
        for number, (key, row) in enumerate(targets, 1):
            matched += 1
            new = list(row)
            for position, value in setters:
                new[position] = schema.default_row[position] if value is None else value(new)
            changes = {schema.columns[i].name: new[i] for i, _ in setters}
            change = trx.update(table, key, changes, row_number=number, touch=touch)
            if change is not None and change.before != change.after:
                changed += 1
        info = f"Rows matched: {matched}  Changed: {changed}  Warnings: 0"
        return Ok(matched if session.found_rows else changed, 0, info)

    return session.run_statement(body)


def run_delete(
    session: Session, stmt: ast.Delete, subqueries: SubqueryPlanner | None = None
) -> Result:
    """Single-table DELETE; ``subqueries`` plans the subqueries of its WHERE."""
    table = resolve_table(session, stmt.table)
    schema = table.schema
    compiler = Compiler([c.name for c in schema.columns], schema.name, session.context)
    compiler.subqueries = subqueries

    def body(trx: Transaction) -> Result:
        deleted = 0
        for key, _ in list(
            _write_targets(session, trx, table, stmt.where, stmt.order_by, stmt.limit, compiler)
        ):
            trx.delete(table, key)
            deleted += 1
        return Ok(deleted)

    return session.run_statement(body)


Handler = Callable[[Session, ast.Statement], Result]
