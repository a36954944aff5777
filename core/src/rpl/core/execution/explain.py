"""EXPLAIN [FORMAT=TRADITIONAL] (and DESCRIBE/DESC) of SELECT, UPDATE, DELETE, INSERT and
REPLACE: MySQL 8.0's twelve columns, one row per table read, from the plan the server
really runs.

What each row says, and why it holds: ``type`` is ``const`` when the WHERE clause fixes
FROM's first table to one primary key, ``range`` for several keys or a key range,
``eq_ref`` for a joined table read by its whole primary key from the tables before it,
``ALL`` for a scan (those are the only reads the engine has, see
:mod:`rpl.core.execution.dml` and :mod:`rpl.core.execution.query`); ``rows`` is 1 for a
key lookup, the number of rows in the key list or range for ``range`` and the table's row
count for a scan (the engine knows them exactly; MySQL estimates). ``key_len`` is the
primary key's length in bytes as InnoDB counts it (4 for INT, 8 for BIGINT, 4 bytes a
character plus 2 for VARCHAR). Derived tables are ``<derivedN>`` rows of select_type
PRIMARY with their query as id N, DERIVED; subqueries are SUBQUERY, or DEPENDENT SUBQUERY
when they read the outer query.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from rpl.core.engine import TableSchema, Transaction
from rpl.core.errors import ER_NOT_SUPPORTED_YET, MySQLError
from rpl.core.execution import dml, query
from rpl.core.execution.expressions import Compiler
from rpl.core.execution.results import Result, Rows
from rpl.core.execution.session import Session
from rpl.core.net.responses import Column, column_for_value
from rpl.core.sql import ast

_COLUMNS = [
    column_for_value("id", 1),
    Column("select_type"),
    Column("table"),
    Column("partitions"),
    Column("type"),
    Column("possible_keys"),
    Column("key"),
    Column("key_len"),
    Column("ref"),
    column_for_value("rows", 1),
    column_for_value("filtered", Decimal("100.00")),
    Column("Extra"),
]
_KEY_BYTES = {"TINYINT": 1, "SMALLINT": 2, "MEDIUMINT": 3, "INT": 4, "INTEGER": 4, "BIGINT": 8}
_FULL = Decimal("100.00")
ExplainRow = list[object]


def run_explain(session: Session, stmt: ast.Explain) -> Result:
    """The plan of ``stmt.statement`` as MySQL's traditional EXPLAIN shows it."""
    target = stmt.statement

    def body(trx: Transaction) -> Result:
        return Rows(_COLUMNS, list(_rows(session, trx, target)))

    return session.run_statement(body)


def _rows(session: Session, trx: Transaction, stmt: ast.Statement) -> Iterator[ExplainRow]:
    if isinstance(stmt, ast.Select | ast.Union):
        yield from _query_rows(session, trx, stmt, [1], "SIMPLE")
    elif isinstance(stmt, ast.Update | ast.Delete):
        table = dml.resolve_table(session, stmt.table)
        kind = "UPDATE" if isinstance(stmt, ast.Update) else "DELETE"
        yield _first_table_row(
            session,
            trx,
            1,
            kind,
            stmt.table.alias or stmt.table.name,
            table.schema,
            stmt.where,
            stmt.where,
        )
    elif isinstance(stmt, ast.Insert):
        kind = "REPLACE" if stmt.replace else "INSERT"
        yield [1, kind, stmt.table.name, None, "ALL", None, None, None, None, None, None, None]
        if stmt.select is not None:
            yield from _query_rows(session, trx, stmt.select, [1], "SIMPLE")
    else:
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, "EXPLAIN of this statement")


def _query_rows(
    session: Session, trx: Transaction, stmt: ast.Select | ast.Union, ids: list[int], kind: str
) -> Iterator[ExplainRow]:
    """Rows for one query; ``ids`` is the next free select id (shared, counted up)."""
    if isinstance(stmt, ast.Union):
        members = []
        for number, select in enumerate(stmt.selects):
            members.append(str(ids[0]))
            yield from _query_rows(session, trx, select, ids, "PRIMARY" if number == 0 else "UNION")
        if not all(stmt.all):  # UNION DISTINCT deduplicates in a temporary table
            union = f"<union{','.join(members)}>"
            yield [
                None,
                "UNION RESULT",
                union,
                None,
                "ALL",
                None,
                None,
                None,
                None,
                None,
                None,
                "Using temporary",
            ]
        return
    my_id = ids[0]
    ids[0] += 1
    nested = stmt.subqueries or any(isinstance(j.source, ast.DerivedTable) for j in stmt.joins)
    select_type = "PRIMARY" if nested and kind == "SIMPLE" else kind
    later: list[tuple[ast.Select | ast.Union, int, str]] = []
    shared = query.Shared(session)
    shared.trx = trx
    plan = query.QueryPlan(session, stmt, shared, None)
    if not plan.steps:
        yield [
            my_id,
            select_type,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            "No tables used",
        ]
    extra = _extra(stmt)
    for index, step in enumerate(plan.steps):
        source = step.source
        if source.derived is not None:
            derived_id = ids[0] + len(later)
            derived = next(
                j.source
                for j in stmt.joins
                if isinstance(j.source, ast.DerivedTable) and j.source.alias == source.qualifier
            )
            assert isinstance(derived, ast.DerivedTable)
            later.append((derived.select, derived_id, "DERIVED"))
            rows = len(source.derived.run(()))
            yield [
                my_id,
                select_type,
                f"<derived{derived_id}>",
                None,
                "ALL",
                None,
                None,
                None,
                None,
                rows,
                _FULL,
                extra if index == len(plan.steps) - 1 else None,
            ]
            continue
        schema = source.schema
        assert schema is not None
        if index == 0:
            yield _first_table_row(
                session,
                trx,
                my_id,
                select_type,
                source.qualifier,
                schema,
                plan.first_where,
                stmt.where,
                extra,
            )
        elif step.lookup is not None:
            yield [
                my_id,
                select_type,
                source.qualifier,
                None,
                "eq_ref",
                "PRIMARY",
                "PRIMARY",
                _key_len(schema),
                _ref(plan, index),
                1,
                _FULL,
                None,
            ]
        else:
            table = source.table
            assert table is not None
            yield [
                my_id,
                select_type,
                source.qualifier,
                None,
                "ALL",
                None,
                None,
                None,
                None,
                len(table),
                _FULL,
                "Using where; Using join buffer (hash join)"
                if step.on is not None or stmt.where is not None
                else None,
            ]
    for subquery in _subqueries(stmt):
        later.append((subquery, ids[0] + len(later), "SUBQUERY"))
    for inner, number, sub_kind in later:
        ids[0] = number
        yield from _query_rows(session, trx, inner, ids, sub_kind)


def _extra(stmt: ast.Select) -> str | None:
    parts = []
    if stmt.where is not None:
        parts.append("Using where")
    if stmt.group_by or stmt.distinct:
        parts.append("Using temporary")
    if stmt.order_by:
        parts.append("Using filesort")
    return "; ".join(parts) or None


def _first_table_row(
    session: Session,
    trx: Transaction,
    number: int,
    select_type: str,
    name: str,
    schema: TableSchema,
    narrowing: ast.Expression | None,
    where: ast.Expression | None,
    extra: str | None = None,
) -> ExplainRow:
    """The row of a statement's first (or only) table: const, range or ALL."""
    table = dml.resolve_table(session, ast.TableName(schema.name, schema.db))
    compiler = Compiler([c.name for c in schema.columns], schema.name, session.context)
    keys = dml.pk_keys(schema, narrowing, compiler)
    if extra is None and where is not None:
        extra = "Using where"
    key_len = _key_len(schema)
    if isinstance(keys, list) and len(keys) == 1:
        found = len(list(dml.candidate_rows(trx, table, narrowing, compiler)))
        if found == 0:
            return [
                number,
                select_type,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                "no matching row in const table",
            ]
        return [
            number,
            select_type,
            name,
            None,
            "const",
            "PRIMARY",
            "PRIMARY",
            key_len,
            "const",
            1,
            _FULL,
            None,
        ]
    if keys is not None:
        rows = len(list(dml.candidate_rows(trx, table, narrowing, compiler)))
        return [
            number,
            select_type,
            name,
            None,
            "range",
            "PRIMARY",
            "PRIMARY",
            key_len,
            None,
            rows,
            _FULL,
            extra,
        ]
    return [
        number,
        select_type,
        name,
        None,
        "ALL",
        None,
        None,
        None,
        None,
        len(table),
        _FULL,
        extra,
    ]


def _key_len(schema: TableSchema) -> str:
    total = 0
    for position in schema.pk_positions:
        column = schema.columns[position]
        if column.type_name in _KEY_BYTES:
            total += _KEY_BYTES[column.type_name]
        elif column.type_name in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            width = 4 if column.type_name in ("CHAR", "VARCHAR") else 1
            total += (column.length or 1) * width + (2 if "VAR" in column.type_name else 0)
        else:
            total += 8
    return str(total)


def _ref(plan: query.QueryPlan, index: int) -> str:
    """EXPLAIN's ``ref`` of a join lookup: per primary-key column, the ``db.table.column``
    its value is read from (``const`` for a constant, ``func`` for an expression).
    """
    source = plan.steps[index].source
    schema = source.schema
    assert schema is not None
    on = plan.conditions[index][0]
    terms = dml.conjuncts(on) if on is not None else []
    refs = []
    for position in schema.pk_positions:
        name = schema.columns[position].name.lower()
        refs.append(_ref_of(plan, index, name, terms))
    return ",".join(refs)


def _ref_of(plan: query.QueryPlan, index: int, name: str, terms: list[ast.Expression]) -> str:
    """Where the join's ON reads the key column ``name`` of step ``index`` from."""
    source = plan.steps[index].source
    for term in terms:
        if not (isinstance(term, ast.Binary) and term.op == "="):
            continue
        for mine, other in ((term.left, term.right), (term.right, term.left)):
            if not (isinstance(mine, ast.Column) and mine.name.lower() == name):
                continue
            if mine.table is not None and mine.table.lower() != source.qualifier.lower():
                continue
            if isinstance(other, ast.Literal):
                return "const"
            if isinstance(other, ast.Column):
                for step in plan.steps[:index]:
                    before = step.source
                    qualifier = (other.table or before.qualifier).lower()
                    names = [n.lower() for n in before.names]
                    if qualifier == before.qualifier.lower() and other.name.lower() in names:
                        return f"{before.db or ''}.{before.qualifier}.{other.name}"
    return "func"


def _subqueries(stmt: ast.Select) -> Iterator[ast.Select | ast.Union]:
    """The subqueries of ``stmt``'s select list, WHERE and HAVING, in written order."""
    roots: list[object] = [i.expr for i in stmt.items]
    roots += [stmt.where, stmt.having]
    for root in roots:
        yield from _walk(root)


def _walk(expr: object) -> Iterator[ast.Select | ast.Union]:
    if isinstance(expr, ast.Subquery | ast.Exists | ast.InSubquery | ast.QuantifiedComparison):
        if isinstance(expr, ast.InSubquery | ast.QuantifiedComparison):
            yield from _walk(expr.operand)
        yield expr.select
        return
    for child in query.children(expr):
        yield from _walk(child)
