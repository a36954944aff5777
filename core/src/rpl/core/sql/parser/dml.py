"""Data manipulation: SELECT, INSERT, REPLACE, UPDATE and DELETE (single-table, as the
subset runs them).

SELECT reads its common clauses first (select list, FROM one table, WHERE) and skips the
rarer ones (GROUP BY, HAVING, ORDER BY, LIMIT, locking reads) with one end-of-statement
check. FROM with several tables (comma, [INNER|CROSS] JOIN, LEFT/RIGHT [OUTER] JOIN with
ON or USING, derived tables, index hints) becomes :class:`~rpl.core.sql.ast.JoinStep`s;
UNION [ALL] a :class:`~rpl.core.sql.ast.Union`; INSERT/REPLACE ... SELECT carries its
query. NATURAL JOIN, nested join parentheses, EXCEPT/INTERSECT, multi-table
UPDATE/DELETE and PARTITION are recognised and refused with 1235.
"""

from __future__ import annotations

from typing import Final

import attrs

from rpl.core.errors import ER_DERIVED_MUST_HAVE_ALIAS, MySQLError
from rpl.core.sql import ast
from rpl.core.sql.lexer import K_QUOTED, K_STRING, K_WORD
from rpl.core.sql.parser.cursor import RESERVED, Parser, Rule, not_supported
from rpl.core.sql.parser.expressions import column_ref, expr, query

_SELECT_OPTIONS: Final = frozenset(
    (
        "ALL",
        "HIGH_PRIORITY",
        "STRAIGHT_JOIN",
        "SQL_SMALL_RESULT",
        "SQL_BIG_RESULT",
        "SQL_BUFFER_RESULT",
        "SQL_NO_CACHE",
        "SQL_CACHE",
    )
)
_JOIN_WORDS: Final = frozenset(
    (
        "JOIN",
        "INNER",
        "LEFT",
        "RIGHT",
        "CROSS",
        "STRAIGHT_JOIN",
        "NATURAL",
        "OUTER",
        "FULL",
    )
)
_SET_OPS: Final = frozenset(("UNION", "EXCEPT", "INTERSECT"))


def select(p: Parser) -> ast.Select:
    first = p.i
    p.i += 1  # SELECT
    distinct = False
    while True:
        key = p.key
        if key == "DISTINCT" or key == "DISTINCTROW":
            distinct = True
        elif key == "SQL_CALC_FOUND_ROWS":
            raise not_supported("SQL_CALC_FOUND_ROWS")
        elif key not in _SELECT_OPTIONS:
            break
        p.i += 1
    items = [select_item(p)]
    while p.accept(","):
        items.append(select_item(p))
    table = None
    joins: tuple[ast.JoinStep, ...] = ()
    if p.key == "INTO":
        raise not_supported("SELECT ... INTO")
    if p.accept("FROM"):
        if not p.accept("DUAL"):
            source = table_factor(p)
            if p.key == "," or p.key in _JOIN_WORDS:
                joins = join_steps(p, source)
            elif isinstance(source, ast.DerivedTable):
                joins = (ast.JoinStep(source),)
            else:
                table = source
    where = expr(p) if p.accept("WHERE") else None
    group_by: tuple[ast.OrderItem, ...] = ()
    having = None
    order_by: tuple[ast.OrderItem, ...] = ()
    limit = offset = None
    lock = None
    if not p.at_end():  # the rarer clauses: one check skips them all
        if p.accept_seq("GROUP", "BY"):
            group_by = order_list(p)
            if p.key == "WITH":
                raise not_supported("WITH ROLLUP")
        having = expr(p) if p.accept("HAVING") else None
        if p.key == "WINDOW":
            raise not_supported("WINDOW")
        order_by = order_list(p) if p.accept_seq("ORDER", "BY") else ()
        if p.accept("LIMIT"):
            limit, offset = limit_clause(p)
        if p.accept_seq("FOR", "UPDATE"):
            lock = "FOR UPDATE"
        elif p.accept_seq("FOR", "SHARE"):
            lock = "SHARE"
        elif p.accept_seq("LOCK", "IN", "SHARE", "MODE"):
            lock = "SHARE"
        if lock is not None and p.key in ("NOWAIT", "SKIP", "OF"):
            raise not_supported(f"FOR UPDATE {p.key}")
        if p.key in ("EXCEPT", "INTERSECT"):
            raise not_supported(p.key)
        if p.key == "INTO":
            raise not_supported("SELECT ... INTO")
    subqueries = any(tok[1] == "SELECT" and tok[0] is K_WORD for tok in p.toks[first + 1 : p.i])
    return ast.Select(
        tuple(items),
        table,
        distinct,
        where,
        group_by,
        having,
        order_by,
        limit,
        offset,
        lock,
        joins,
        subqueries,
    )


def query_expression(p: Parser) -> ast.Select | ast.Union:
    """``SELECT ... [UNION [ALL|DISTINCT] SELECT ...]...``: ORDER BY / LIMIT written after
    the last SELECT belong to the whole union, as in MySQL.
    """
    if p.key != "SELECT":
        p.error()
    first = select(p)
    if p.key != "UNION":
        return first
    selects = [first]
    all_flags = []
    while p.accept("UNION"):
        all_flags.append(p.accept("ALL"))
        if not all_flags[-1]:
            p.accept("DISTINCT")
        if p.key != "SELECT":
            raise not_supported("UNION of parenthesized queries")
        selects.append(select(p))
    last = selects[-1]
    order_by, limit, offset = last.order_by, last.limit, last.offset
    selects[-1] = attrs.evolve(last, order_by=(), limit=None, offset=None)
    return ast.Union(tuple(selects), tuple(all_flags), order_by, limit, offset)


def table_factor(p: Parser) -> ast.TableName | ast.DerivedTable:
    """One table of FROM: ``[db.]t [[AS] alias] [index hints]`` or ``(SELECT ...) [AS] d``."""
    if p.accept("("):
        if p.key not in ("SELECT", "WITH"):
            raise not_supported("nested joins")
        inner = query(p)
        p.expect(")")
        p.accept("AS")
        kind = p.toks[p.i][0]
        if kind is K_QUOTED or (kind is K_WORD and p.key not in RESERVED):
            return ast.DerivedTable(inner, p.ident())
        raise MySQLError.of(ER_DERIVED_MUST_HAVE_ALIAS)
    table = p.table_name(alias=True)
    if p.key == "PARTITION":
        raise not_supported("PARTITION")
    index_hints(p)
    return table


def index_hints(p: Parser) -> None:
    """``{USE|FORCE|IGNORE} {INDEX|KEY} [FOR JOIN|ORDER BY|GROUP BY] ([names])``, any
    number: parsed and dropped (every read uses the primary key or scans).
    """
    while p.key in ("USE", "FORCE", "IGNORE") and p.peek_key() in ("INDEX", "KEY"):
        p.i += 2
        if p.accept("FOR") and not (
            p.accept("JOIN") or p.accept_seq("ORDER", "BY") or p.accept_seq("GROUP", "BY")
        ):
            p.error()
        p.expect("(")
        if not p.accept(")"):
            while True:
                if not p.accept("PRIMARY"):
                    p.ident()
                if not p.accept(","):
                    break
            p.expect(")")


def join_steps(p: Parser, first: ast.TableName | ast.DerivedTable) -> tuple[ast.JoinStep, ...]:
    """The tables after FROM's first, left to right, with their join kind and condition."""
    steps = [ast.JoinStep(first)]
    while True:
        key = p.key
        if key == ",":
            p.i += 1
            steps.append(ast.JoinStep(table_factor(p), "INNER"))
            continue
        if key == "NATURAL":
            raise not_supported("NATURAL JOIN")
        if key in ("JOIN", "STRAIGHT_JOIN"):
            p.i += 1
            kind = "INNER"
        elif key in ("INNER", "CROSS"):
            p.i += 1
            p.expect("JOIN")
            kind = "INNER"
        elif key in ("LEFT", "RIGHT"):
            p.i += 1
            p.accept("OUTER")
            p.expect("JOIN")
            kind = key
        else:
            return tuple(steps)
        source = table_factor(p)
        on = None
        using: tuple[str, ...] = ()
        if p.accept("ON"):
            on = expr(p)
        elif p.accept("USING"):
            using = p.paren_names()
        elif kind != "INNER":
            p.error()
        steps.append(ast.JoinStep(source, kind, on, using))


def select_item(p: Parser) -> ast.SelectItem:
    toks, i = p.toks, p.i
    start = toks[i][3]
    if toks[i][1] == "*":
        p.i += 1
        return ast.SelectItem(ast.Star(), None, "*")
    kind = toks[i][0]
    if (kind is K_WORD or kind is K_QUOTED) and toks[i + 1][1] == ".":
        if toks[i + 2][1] == "*":
            p.i += 3
            star = ast.Star(toks[i][2])
            return ast.SelectItem(star, None, p.sql[start : toks[i + 2][4]])
        if len(toks) > i + 4 and toks[i + 3][1] == "." and toks[i + 4][1] == "*":
            p.i += 5
            star = ast.Star(toks[i + 2][2], toks[i][2])
            return ast.SelectItem(star, None, p.sql[start : toks[i + 4][4]])
    item = expr(p)
    text = p.sql[start : p.toks[p.i - 1][4]]
    alias = None
    kind, key, value, _, _ = p.toks[p.i]
    if key == "AS":
        p.i += 1
        alias = p.name_or_string()
    elif kind is K_QUOTED or kind is K_STRING or (kind is K_WORD and key not in RESERVED):
        p.i += 1
        alias = value
    return ast.SelectItem(item, alias, text)


def order_list(p: Parser) -> tuple[ast.OrderItem, ...]:
    items = []
    while True:
        value = expr(p)
        descending = False
        if p.accept("DESC"):
            descending = True
        else:
            p.accept("ASC")
        items.append(ast.OrderItem(value, descending))
        if not p.accept(","):
            return tuple(items)


def limit_value(p: Parser) -> int | ast.Placeholder:
    if p.accept("?"):
        p.placeholders += 1
        return ast.Placeholder(p.placeholders - 1)
    return p.integer()


def limit_clause(p: Parser) -> tuple[int | ast.Placeholder, int | ast.Placeholder | None]:
    """``n``, ``n OFFSET m`` or ``m, n``: (limit, offset)."""
    first = limit_value(p)
    if p.accept(","):
        return limit_value(p), first
    if p.accept("OFFSET"):
        return first, limit_value(p)
    return first, None


def insert(p: Parser) -> ast.Insert:
    replace = p.key == "REPLACE"
    p.i += 1
    ignore = False
    while True:
        if p.key in ("LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY"):
            p.i += 1
        elif not replace and p.key == "IGNORE":
            p.i += 1
            ignore = True
        else:
            break
    p.accept("INTO")
    table = p.table_name()
    verb = "REPLACE" if replace else "INSERT"
    if p.key == "PARTITION":
        raise not_supported(f"{verb} ... PARTITION")
    columns: tuple[str, ...] = ()
    rows: list[tuple[ast.Expression, ...]] = []
    select = None
    if p.key == "(":
        if p.peek_key() in ("WITH", "("):
            raise not_supported(f"{verb} ... SELECT")
        if p.peek_key() == "SELECT":
            p.i += 1
            select = query(p)
            p.expect(")")
        elif p.peek_key() == ")":
            p.i += 2
        else:
            columns = p.paren_names()
    key = p.key
    if select is not None:
        pass
    elif key == "SELECT":
        select = query(p)
    elif key == "(" and p.peek_key() == "SELECT":
        p.i += 1
        select = query(p)
        p.expect(")")
    elif key == "VALUES" or key == "VALUE":
        p.i += 1
        while True:
            if p.key == "ROW":
                p.i += 1
            rows.append(row(p))
            if not p.accept(","):
                break
    elif key == "SET" and not columns:
        p.i += 1
        pairs = assignments(p)
        columns = tuple(a.column.name for a in pairs)
        rows.append(tuple(a.value for a in pairs))
    elif key in ("TABLE", "WITH", "("):
        raise not_supported(f"{verb} ... {'SELECT' if key in ('(', 'WITH') else key}")
    else:
        p.error()
    if p.key == "AS":
        raise not_supported(f"{verb} ... AS alias")
    on_duplicate: tuple[ast.Assignment, ...] = ()
    if not replace and p.accept_seq("ON", "DUPLICATE", "KEY", "UPDATE"):
        on_duplicate = assignments(p)
    return ast.Insert(table, columns, tuple(rows), ignore, replace, on_duplicate, select)


def row(p: Parser) -> tuple[ast.Expression, ...]:
    p.expect("(")
    if p.accept(")"):
        return ()
    values = [expr(p)]
    while p.accept(","):
        values.append(expr(p))
    p.expect(")")
    return tuple(values)


def assignments(p: Parser) -> tuple[ast.Assignment, ...]:
    result = []
    while True:
        column = column_ref(p)
        p.expect("=")
        result.append(ast.Assignment(column, expr(p)))
        if not p.accept(","):
            return tuple(result)


def update(p: Parser) -> ast.Update:
    p.i += 1
    ignore = False
    while p.key in ("LOW_PRIORITY", "IGNORE"):
        ignore = ignore or p.key == "IGNORE"
        p.i += 1
    table = p.table_name(alias=True)
    if p.key == "," or p.key in _JOIN_WORDS:
        raise not_supported("multi-table UPDATE")
    p.expect("SET")
    pairs = assignments(p)
    where = expr(p) if p.accept("WHERE") else None
    order_by = order_list(p) if p.accept_seq("ORDER", "BY") else ()
    limit = limit_value(p) if p.accept("LIMIT") else None
    return ast.Update(table, pairs, where, order_by, limit, ignore)


def delete(p: Parser) -> ast.Delete:
    p.i += 1
    ignore = False
    while p.key in ("LOW_PRIORITY", "QUICK", "IGNORE"):
        ignore = ignore or p.key == "IGNORE"
        p.i += 1
    if p.key != "FROM":
        if p.toks[p.i][0] in (K_WORD, K_QUOTED):
            raise not_supported("multi-table DELETE")
        p.error()
    p.i += 1
    table = p.table_name(alias=True)
    if p.key in (",", "USING") or p.key in _JOIN_WORDS:
        raise not_supported("multi-table DELETE")
    if p.key == "PARTITION":
        raise not_supported("DELETE ... PARTITION")
    where = expr(p) if p.accept("WHERE") else None
    order_by = order_list(p) if p.accept_seq("ORDER", "BY") else ()
    limit = limit_value(p) if p.accept("LIMIT") else None
    return ast.Delete(table, where, order_by, limit, ignore)


def explain(p: Parser) -> ast.Explain:
    """EXPLAIN / DESCRIBE / DESC [FORMAT=TRADITIONAL|TREE|JSON] of a data statement (the
    word is consumed by the caller).
    """
    format_ = "TRADITIONAL"
    if p.accept("FORMAT"):
        p.expect("=")
        format_ = p.any_word().upper()
        if format_ != "TRADITIONAL":
            raise not_supported(f"EXPLAIN FORMAT={format_}")
    rule = STATEMENTS.get(p.key)
    if rule is None or p.toks[p.i][0] is not K_WORD:
        raise not_supported("EXPLAIN")
    return ast.Explain(rule(p), format_)


STATEMENTS: Final[dict[str, Rule]] = {
    "SELECT": query_expression,
    "INSERT": insert,
    "REPLACE": insert,
    "UPDATE": update,
    "DELETE": delete,
}
"""This family's statements by their first word."""
