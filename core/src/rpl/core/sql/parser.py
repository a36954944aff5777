"""Recursive-descent parser for the MySQL 8.0 subset the server runs.

:func:`parse` turns one statement (a trailing ``;`` allowed) into a
:class:`~rpl.core.sql.ast.Statement`; :func:`parse_expression` one expression into an
:class:`~rpl.core.sql.ast.Expression`. Failures are the errors MySQL reports:

* 1064 ER_PARSE_ERROR for text that is not MySQL, quoting the statement from the
  offending token on (at most 80 characters) and naming that token's line;
* 1065 ER_EMPTY_QUERY for a statement of only whitespace and comments;
* 1235 ER_NOT_SUPPORTED_YET for a recognisable MySQL statement or clause outside the
  subset (ALTER TABLE, JOIN, UNION, subqueries...), naming it.

Why by hand: sqlglot (already a dev dependency) parses MySQL, but timed on the sysbench
OLTP statements (``timeit``, CPython 3.11, one Xeon core) ``sqlglot.parse_one(sql,
read="mysql")`` takes 90-190 µs a statement against 11-33 µs here (2 µs for BEGIN and
COMMIT), about 8x faster; an oltp_read_write transaction (10 point selects, 4 ranges, 2
updates, a delete, an insert, BEGIN/COMMIT) spends ~2.5 ms parsing with sqlglot against
~0.3 ms with this parser (``docs/research/sql-parser.md`` has the table and the script),
and sqlglot's tree would still have to be translated into nodes the executor can use and
its errors into MySQL's texts. The subset is small enough that one regex tokenizer
(:mod:`rpl.core.sql.lexer`) and a recursive-descent parser cover it in one pass, with
MySQL's 1064 "near '...' at line N" texts exact. About half of a short statement's time
is the tokenizer; the rarer SELECT clauses are skipped with one end-of-statement check.

Expression precedence follows MySQL's grammar (``sql_yacc.yy``), lowest first:
``OR ||`` < ``XOR`` < ``AND &&`` < ``NOT`` < comparisons and ``IS [NOT] NULL`` <
``[NOT] IN / BETWEEN / LIKE`` < ``|`` < ``&`` < ``<< >>`` < ``+ -`` < ``* / DIV % MOD``
< ``^`` < unary ``- ~ !``. ``NOT`` is a prefix of a whole comparison (``NOT a = 1`` is
``NOT (a = 1)``) while ``!`` binds to its operand only, as in MySQL.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Final, NoReturn

from rpl.core.errors import ER_EMPTY_QUERY, ER_NOT_SUPPORTED_YET, MySQLError
from rpl.core.sql import ast
from rpl.core.sql.lexer import (
    K_BYTES,
    K_EOF,
    K_NUMBER,
    K_OP,
    K_QUOTED,
    K_STRING,
    K_USERVAR,
    K_WORD,
    parse_error,
    tokenize,
)
from rpl.core.sql.shapes import ShapeCache

RESERVED: Final = frozenset("""
    ACCESSIBLE ADD ALL ALTER ANALYZE AND AS ASC ASENSITIVE BEFORE BETWEEN BIGINT BINARY BLOB
    BOTH BY CALL CASCADE CASE CHANGE CHAR CHARACTER CHECK COLLATE COLUMN CONDITION CONSTRAINT
    CONTINUE CONVERT CREATE CROSS CUBE CUME_DIST CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP
    CURRENT_USER CURSOR DATABASE DATABASES DAY_HOUR DAY_MICROSECOND DAY_MINUTE DAY_SECOND DEC
    DECIMAL DECLARE DEFAULT DELAYED DELETE DENSE_RANK DESC DESCRIBE DETERMINISTIC DISTINCT
    DISTINCTROW DIV DOUBLE DROP DUAL EACH ELSE ELSEIF EMPTY ENCLOSED ESCAPED EXCEPT EXISTS
    EXIT EXPLAIN FALSE FETCH FIRST_VALUE FLOAT FLOAT4 FLOAT8 FOR FORCE FOREIGN FROM FULLTEXT
    FUNCTION GENERATED GET GRANT GROUP GROUPING GROUPS HAVING HIGH_PRIORITY HOUR_MICROSECOND
    HOUR_MINUTE HOUR_SECOND IF IGNORE IN INDEX INFILE INNER INOUT INSENSITIVE INSERT INT INT1
    INT2 INT3 INT4 INT8 INTEGER INTERSECT INTERVAL INTO IO_AFTER_GTIDS IO_BEFORE_GTIDS IS
    ITERATE JOIN JSON_TABLE KEY KEYS KILL LAG LAST_VALUE LATERAL LEAD LEADING LEAVE LEFT LIKE
    LIMIT LINEAR LINES LOAD LOCALTIME LOCALTIMESTAMP LOCK LONG LONGBLOB LONGTEXT LOOP
    LOW_PRIORITY MASTER_BIND MASTER_SSL_VERIFY_SERVER_CERT MATCH MAXVALUE MEDIUMBLOB MEDIUMINT
    MEDIUMTEXT MIDDLEINT MINUTE_MICROSECOND MINUTE_SECOND MOD MODIFIES NATURAL NOT
    NO_WRITE_TO_BINLOG NTH_VALUE NTILE NULL NUMERIC OF ON OPTIMIZE OPTIMIZER_COSTS OPTION
    OPTIONALLY OR ORDER OUT OUTER OUTFILE OVER PARTITION PERCENT_RANK PRECISION PRIMARY
    PROCEDURE PURGE RANGE RANK READ READS READ_WRITE REAL RECURSIVE REFERENCES REGEXP RELEASE
    RENAME REPEAT REPLACE REQUIRE RESIGNAL RESTRICT RETURN REVOKE RIGHT RLIKE ROW ROWS
    ROW_NUMBER SCHEMA SCHEMAS SECOND_MICROSECOND SELECT SENSITIVE SEPARATOR SET SHOW SIGNAL
    SMALLINT SPATIAL SPECIFIC SQL SQLEXCEPTION SQLSTATE SQLWARNING SQL_BIG_RESULT
    SQL_CALC_FOUND_ROWS SQL_SMALL_RESULT SSL STARTING STORED STRAIGHT_JOIN SYSTEM TABLE
    TERMINATED THEN TINYBLOB TINYINT TINYTEXT TO TRAILING TRIGGER TRUE UNDO UNION UNIQUE
    UNLOCK UNSIGNED UPDATE USAGE USE USING UTC_DATE UTC_TIME UTC_TIMESTAMP VALUES VARBINARY
    VARCHAR VARCHARACTER VARYING VIRTUAL WHEN WHERE WHILE WINDOW WITH WRITE XOR YEAR_MONTH
    ZEROFILL
""".split())
"""MySQL 8.0's reserved words: never an unquoted identifier or alias."""

_COMPARISON: Final = {
    "=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
    "<=>": "<=>",
}
_BIT_OPS: Final = {
    "|": 1, "&": 2, "<<": 3, ">>": 3, "+": 4, "-": 4,
    "*": 5, "/": 5, "DIV": 5, "%": 5, "MOD": 5, "^": 6,
}
_NILADIC: Final = frozenset((
    "CURRENT_TIMESTAMP", "CURRENT_USER", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIME",
    "LOCALTIMESTAMP", "UTC_TIMESTAMP", "UTC_DATE", "UTC_TIME",
))
_SELECT_OPTIONS: Final = frozenset((
    "ALL", "HIGH_PRIORITY", "STRAIGHT_JOIN", "SQL_SMALL_RESULT", "SQL_BIG_RESULT",
    "SQL_BUFFER_RESULT", "SQL_NO_CACHE", "SQL_CACHE",
))
_JOIN_WORDS: Final = frozenset((
    "JOIN", "INNER", "LEFT", "RIGHT", "CROSS", "STRAIGHT_JOIN", "NATURAL", "OUTER", "FULL",
))
_SET_OPS: Final = frozenset(("UNION", "EXCEPT", "INTERSECT"))
_END: Final = frozenset((";", ""))
_ISOLATION_LEVELS: Final = {
    "READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"}
_SCOPES: Final = {
    "GLOBAL": "GLOBAL", "SESSION": "SESSION", "LOCAL": "SESSION", "PERSIST": "PERSIST",
    "PERSIST_ONLY": "PERSIST_ONLY"}
_SLAVE: Final = frozenset(("SLAVE", "REPLICA"))
_THREADS: Final = frozenset(("IO_THREAD", "SQL_THREAD", "RELAY_THREAD"))
_UNSUPPORTED_VERBS: Final = frozenset("""
    ALTER ANALYZE BINLOG CACHE CALL CHECK CLONE DEALLOCATE DECLARE DO EXECUTE GET HANDLER HELP
    IMPORT LOAD LOCK OPTIMIZE PREPARE RELEASE RENAME REPAIR RESIGNAL RESTART SAVEPOINT SIGNAL
    TABLE UNLOCK VALUES WITH XA
""".split())
_ONE_WORD_VERBS: Final = frozenset((
    "CALL", "DEALLOCATE", "DO", "EXECUTE", "HANDLER", "HELP", "PREPARE", "RESIGNAL",
    "RESTART", "SAVEPOINT", "SIGNAL", "TABLE", "VALUES", "WITH", "XA", "BINLOG", "CLONE"))


def not_supported(what: str) -> MySQLError:
    """MySQL's 1235 for ``what``, a valid statement or clause the server does not run."""
    return MySQLError.of(ER_NOT_SUPPORTED_YET, what)


def parse(sql: str) -> ast.Statement:
    """The statement ``sql`` holds: exactly one, optionally followed by ``;``.

    Statements of a shape seen before are built from that shape's tree
    (:mod:`rpl.core.sql.shapes`); the result is the same as :func:`parse_text`'s.
    """
    return _SHAPES.parse(sql)


def parse_text(sql: str) -> ast.Statement:
    """:func:`parse` without the shape cache: tokenize and parse ``sql`` in full."""
    parser = _Parser(sql)
    if parser.toks[0][0] is K_EOF:
        raise MySQLError.of(ER_EMPTY_QUERY)
    statement = parser.statement()
    parser.accept(";")
    parser.expect_end()
    return statement


_SHAPES: Final = ShapeCache(parse_text)


def parse_expression(sql: str) -> ast.Expression:
    """The single expression ``sql`` holds (nothing may follow it)."""
    parser = _Parser(sql)
    expr = parser.expr()
    parser.expect_end()
    return expr


class _Parser:
    """One statement's parse: the token list and a cursor into it.

    Methods named after a grammar rule consume exactly that rule's tokens and leave the
    cursor on the first token after it; ``error()`` reports the token under the cursor.
    """

    __slots__ = ("sql", "toks", "i", "placeholders")

    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.toks = tokenize(sql)
        self.i = 0
        self.placeholders = 0

    # -- cursor helpers -----------------------------------------------------------------

    @property
    def key(self) -> str:
        return self.toks[self.i][1]

    def peek_key(self, ahead: int = 1) -> str:
        index = min(self.i + ahead, len(self.toks) - 1)
        return self.toks[index][1]

    def error(self) -> NoReturn:
        raise parse_error(self.sql, self.toks[self.i][3])

    def accept(self, key: str) -> bool:
        if self.toks[self.i][1] == key:
            self.i += 1
            return True
        return False

    def accept_seq(self, *keys: str) -> bool:
        """Consume ``keys`` if the tokens under the cursor are exactly them."""
        toks, i = self.toks, self.i
        if i + len(keys) >= len(toks):
            return False
        for offset, key in enumerate(keys):
            if toks[i + offset][1] != key:
                return False
        self.i = i + len(keys)
        return True

    def expect(self, key: str) -> None:
        if self.toks[self.i][1] != key:
            self.error()
        self.i += 1

    def expect_end(self) -> None:
        if self.toks[self.i][0] is not K_EOF:
            self.error()

    def at_end(self) -> bool:
        """Whether the statement ends here (``;`` or end of text)."""
        return self.toks[self.i][1] in _END and self.toks[self.i][0] in (K_OP, K_EOF)

    def ident(self) -> str:
        """An identifier: a backquoted name or a plain word that is not reserved."""
        kind, key, value, _, _ = self.toks[self.i]
        if kind is K_QUOTED or (kind is K_WORD and key not in RESERVED):
            self.i += 1
            text: str = value
            return text
        self.error()

    def any_word(self) -> str:
        """A name where MySQL takes any word, reserved or not (after a ``.``)."""
        kind, _, value, _, _ = self.toks[self.i]
        if kind is K_QUOTED or kind is K_WORD:
            self.i += 1
            text: str = value
            return text
        self.error()

    def name_or_string(self) -> str:
        """A name that may also be written as a string (charsets, plugins, engines)."""
        kind, _, value, _, _ = self.toks[self.i]
        if kind is K_QUOTED or kind is K_WORD or kind is K_STRING:
            self.i += 1
            text: str = value
            return text
        self.error()

    def string(self) -> str:
        kind, _, value, _, _ = self.toks[self.i]
        if kind is not K_STRING:
            self.error()
        self.i += 1
        text: str = value
        return text

    def integer(self) -> int:
        kind, _, value, _, _ = self.toks[self.i]
        if kind is not K_NUMBER or type(value) is not int:
            self.error()
        self.i += 1
        return value

    def table_name(self, alias: bool = False) -> ast.TableName:
        """``[schema.]name``, with ``[[AS] alias]`` when ``alias`` is allowed."""
        name = self.ident()
        schema = None
        if self.key == ".":
            self.i += 1
            schema, name = name, self.any_word()
        alias_name = None
        if alias:
            if self.accept("AS"):
                alias_name = self.ident()
            elif self.toks[self.i][0] is K_QUOTED or (
                    self.toks[self.i][0] is K_WORD and self.key not in RESERVED):
                alias_name = self.ident()
        return ast.TableName(name, schema, alias_name)

    def paren_names(self) -> tuple[str, ...]:
        """``(name, ...)``."""
        self.expect("(")
        names = [self.ident()]
        while self.accept(","):
            names.append(self.ident())
        self.expect(")")
        return tuple(names)

    # -- statements ---------------------------------------------------------------------

    def statement(self) -> ast.Statement:
        key = self.key
        handler = _STATEMENTS.get(key)
        if handler is not None and self.toks[self.i][0] is K_WORD:
            return handler(self)
        if key in _UNSUPPORTED_VERBS or key == "(":
            raise not_supported(self.verb_name())
        self.error()

    def verb_name(self) -> str:
        """A name for an unsupported statement: its first one or two words."""
        first = self.key
        if first == "(":
            return "parenthesized query expressions"
        second = self.peek_key()
        if first == "CREATE" and second in ("OR", "ALGORITHM", "DEFINER", "SQL"):
            return "CREATE VIEW"
        if first in _ONE_WORD_VERBS or self.toks[self.i + 1][0] is not K_WORD:
            return first
        if first == "LOCK" or first == "UNLOCK":
            return f"{first} TABLES"
        return f"{first} {second}"

    def select(self) -> ast.Select:
        self.i += 1  # SELECT
        distinct = False
        while True:
            key = self.key
            if key == "DISTINCT" or key == "DISTINCTROW":
                distinct = True
            elif key == "SQL_CALC_FOUND_ROWS":
                raise not_supported("SQL_CALC_FOUND_ROWS")
            elif key not in _SELECT_OPTIONS:
                break
            self.i += 1
        items = [self.select_item()]
        while self.accept(","):
            items.append(self.select_item())
        table = None
        if self.key == "INTO":
            raise not_supported("SELECT ... INTO")
        if self.accept("FROM"):
            if self.key == "(":
                raise not_supported("subqueries")
            if not self.accept("DUAL"):
                table = self.table_name(alias=True)
            key = self.key
            if key == "," or key in _JOIN_WORDS:
                raise not_supported("JOIN")
            if key in ("USE", "FORCE", "IGNORE"):
                raise not_supported("index hints")
            if key == "PARTITION":
                raise not_supported("PARTITION")
        where = self.expr() if self.accept("WHERE") else None
        group_by: tuple[ast.OrderItem, ...] = ()
        having = None
        order_by: tuple[ast.OrderItem, ...] = ()
        limit = offset = None
        lock = None
        if not self.at_end():  # the rarer clauses: one check skips them all
            if self.accept_seq("GROUP", "BY"):
                group_by = self.order_list()
                if self.key == "WITH":
                    raise not_supported("WITH ROLLUP")
            having = self.expr() if self.accept("HAVING") else None
            if self.key == "WINDOW":
                raise not_supported("WINDOW")
            order_by = self.order_list() if self.accept_seq("ORDER", "BY") else ()
            if self.accept("LIMIT"):
                limit, offset = self.limit_clause()
            if self.accept_seq("FOR", "UPDATE"):
                lock = "FOR UPDATE"
            elif self.accept_seq("FOR", "SHARE"):
                lock = "SHARE"
            elif self.accept_seq("LOCK", "IN", "SHARE", "MODE"):
                lock = "SHARE"
            if lock is not None and self.key in ("NOWAIT", "SKIP", "OF"):
                raise not_supported(f"FOR UPDATE {self.key}")
            if self.key in _SET_OPS:
                raise not_supported(self.key)
            if self.key == "INTO":
                raise not_supported("SELECT ... INTO")
        return ast.Select(
            tuple(items), table, distinct, where, group_by, having, order_by, limit, offset,
            lock)

    def select_item(self) -> ast.SelectItem:
        toks, i = self.toks, self.i
        start = toks[i][3]
        if toks[i][1] == "*":
            self.i += 1
            return ast.SelectItem(ast.Star(), None, "*")
        kind = toks[i][0]
        if (kind is K_WORD or kind is K_QUOTED) and toks[i + 1][1] == ".":
            if toks[i + 2][1] == "*":
                self.i += 3
                star = ast.Star(toks[i][2])
                return ast.SelectItem(star, None, self.sql[start:toks[i + 2][4]])
            if len(toks) > i + 4 and toks[i + 3][1] == "." and toks[i + 4][1] == "*":
                self.i += 5
                star = ast.Star(toks[i + 2][2], toks[i][2])
                return ast.SelectItem(star, None, self.sql[start:toks[i + 4][4]])
        expr = self.expr()
        text = self.sql[start:self.toks[self.i - 1][4]]
        alias = None
        kind, key, value, _, _ = self.toks[self.i]
        if key == "AS":
            self.i += 1
            alias = self.name_or_string()
        elif kind is K_QUOTED or kind is K_STRING or (kind is K_WORD and key not in RESERVED):
            self.i += 1
            alias = value
        return ast.SelectItem(expr, alias, text)

    def order_list(self) -> tuple[ast.OrderItem, ...]:
        items = []
        while True:
            expr = self.expr()
            descending = False
            if self.accept("DESC"):
                descending = True
            else:
                self.accept("ASC")
            items.append(ast.OrderItem(expr, descending))
            if not self.accept(","):
                return tuple(items)

    def limit_value(self) -> int | ast.Placeholder:
        if self.accept("?"):
            self.placeholders += 1
            return ast.Placeholder(self.placeholders - 1)
        return self.integer()

    def limit_clause(self) -> tuple[int | ast.Placeholder, int | ast.Placeholder | None]:
        """``n``, ``n OFFSET m`` or ``m, n``: (limit, offset)."""
        first = self.limit_value()
        if self.accept(","):
            return self.limit_value(), first
        if self.accept("OFFSET"):
            return first, self.limit_value()
        return first, None

    def insert(self) -> ast.Insert:
        replace = self.key == "REPLACE"
        self.i += 1
        ignore = False
        while True:
            if self.key in ("LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY"):
                self.i += 1
            elif not replace and self.key == "IGNORE":
                self.i += 1
                ignore = True
            else:
                break
        self.accept("INTO")
        table = self.table_name()
        verb = "REPLACE" if replace else "INSERT"
        if self.key == "PARTITION":
            raise not_supported(f"{verb} ... PARTITION")
        columns: tuple[str, ...] = ()
        rows: list[tuple[ast.Expression, ...]] = []
        if self.key == "(":
            if self.peek_key() in ("SELECT", "WITH", "("):
                raise not_supported(f"{verb} ... SELECT")
            if self.peek_key() == ")":
                self.i += 2
            else:
                columns = self.paren_names()
        key = self.key
        if key == "VALUES" or key == "VALUE":
            self.i += 1
            while True:
                if self.key == "ROW":
                    self.i += 1
                rows.append(self.row())
                if not self.accept(","):
                    break
        elif key == "SET" and not columns:
            self.i += 1
            assignments = self.assignments()
            columns = tuple(a.column.name for a in assignments)
            rows.append(tuple(a.value for a in assignments))
        elif key in ("SELECT", "TABLE", "WITH", "("):
            raise not_supported(f"{verb} ... {'SELECT' if key in ('(', 'WITH') else key}")
        else:
            self.error()
        if self.key == "AS":
            raise not_supported(f"{verb} ... AS alias")
        on_duplicate: tuple[ast.Assignment, ...] = ()
        if not replace and self.accept_seq("ON", "DUPLICATE", "KEY", "UPDATE"):
            on_duplicate = self.assignments()
        return ast.Insert(table, columns, tuple(rows), ignore, replace, on_duplicate)

    def row(self) -> tuple[ast.Expression, ...]:
        self.expect("(")
        if self.accept(")"):
            return ()
        values = [self.expr()]
        while self.accept(","):
            values.append(self.expr())
        self.expect(")")
        return tuple(values)

    def assignments(self) -> tuple[ast.Assignment, ...]:
        result = []
        while True:
            column = self.column_ref()
            self.expect("=")
            result.append(ast.Assignment(column, self.expr()))
            if not self.accept(","):
                return tuple(result)

    def column_ref(self) -> ast.Column:
        parts = [self.ident()]
        while len(parts) < 3 and self.accept("."):
            parts.append(self.any_word())
        return _column(parts)

    def update(self) -> ast.Update:
        self.i += 1
        ignore = False
        while self.key in ("LOW_PRIORITY", "IGNORE"):
            ignore = ignore or self.key == "IGNORE"
            self.i += 1
        table = self.table_name(alias=True)
        if self.key == "," or self.key in _JOIN_WORDS:
            raise not_supported("multi-table UPDATE")
        self.expect("SET")
        assignments = self.assignments()
        where = self.expr() if self.accept("WHERE") else None
        order_by = self.order_list() if self.accept_seq("ORDER", "BY") else ()
        limit = self.limit_value() if self.accept("LIMIT") else None
        return ast.Update(table, assignments, where, order_by, limit, ignore)

    def delete(self) -> ast.Delete:
        self.i += 1
        ignore = False
        while self.key in ("LOW_PRIORITY", "QUICK", "IGNORE"):
            ignore = ignore or self.key == "IGNORE"
            self.i += 1
        if self.key != "FROM":
            if self.toks[self.i][0] in (K_WORD, K_QUOTED):
                raise not_supported("multi-table DELETE")
            self.error()
        self.i += 1
        table = self.table_name(alias=True)
        if self.key in (",", "USING") or self.key in _JOIN_WORDS:
            raise not_supported("multi-table DELETE")
        if self.key == "PARTITION":
            raise not_supported("DELETE ... PARTITION")
        where = self.expr() if self.accept("WHERE") else None
        order_by = self.order_list() if self.accept_seq("ORDER", "BY") else ()
        limit = self.limit_value() if self.accept("LIMIT") else None
        return ast.Delete(table, where, order_by, limit, ignore)

    # -- DDL ------------------------------------------------------------------------------

    def if_not_exists(self) -> bool:
        return self.accept_seq("IF", "NOT", "EXISTS")

    def create(self) -> ast.Statement:
        self.i += 1
        key = self.key
        if key == "TABLE":
            return self.create_table()
        if key == "DATABASE" or key == "SCHEMA":
            self.i += 1
            if_not_exists = self.if_not_exists()
            name = self.ident()
            return ast.CreateDatabase(name, if_not_exists, self.options())
        if key == "INDEX" or (key == "UNIQUE" and self.peek_key() == "INDEX"):
            unique = self.accept("UNIQUE")
            self.i += 1
            name = self.ident()
            self.skip_index_type()
            self.expect("ON")
            table = self.table_name()
            columns = self.key_parts()
            self.skip_index_options()
            return ast.CreateIndex(name, table, columns, unique)
        if key == "USER":
            self.i += 1
            if_not_exists = self.if_not_exists()
            users = self.user_specs()
            self.user_tail("CREATE USER")
            return ast.CreateUser(users, if_not_exists)
        self.i -= 1
        raise not_supported(self.verb_name())

    def create_table(self) -> ast.CreateTable:
        self.i += 1
        if_not_exists = self.if_not_exists()
        table = self.table_name()
        if self.key == "LIKE":
            raise not_supported("CREATE TABLE ... LIKE")
        if self.key != "(" or self.peek_key() in ("SELECT", "WITH"):
            if self.key in ("AS", "SELECT", "(", "WITH", "IGNORE", "REPLACE"):
                raise not_supported("CREATE TABLE ... SELECT")
            self.error()
        self.i += 1
        columns: list[ast.ColumnDef] = []
        indexes: list[ast.IndexDef] = []
        while True:
            index = self.table_key()
            if index is not None:
                indexes.append(index)
            else:
                columns.append(self.column_def())
            if not self.accept(","):
                break
        self.expect(")")
        options = self.options()
        if self.key in ("AS", "SELECT", "IGNORE", "REPLACE"):
            raise not_supported("CREATE TABLE ... SELECT")
        return ast.CreateTable(table, tuple(columns), tuple(indexes), if_not_exists, options)

    def table_key(self) -> ast.IndexDef | None:
        """A key definition of CREATE TABLE, or None (cursor unmoved) for a column."""
        if self.toks[self.i][0] is not K_WORD:
            return None
        key = self.key
        if key == "CONSTRAINT":
            self.i += 1
            if self.key not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
                self.ident()
            key = self.key
            if key not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
                self.error()
        if key == "FOREIGN":
            raise not_supported("FOREIGN KEY")
        if key == "CHECK":
            raise not_supported("CHECK constraints")
        if key in ("FULLTEXT", "SPATIAL"):
            raise not_supported(f"{key} indexes")
        if key == "PRIMARY":
            self.i += 1
            self.expect("KEY")
            self.skip_index_type()
            columns = self.key_parts()
            self.skip_index_options()
            return ast.IndexDef(None, columns, primary=True)
        if key in ("UNIQUE", "KEY", "INDEX"):
            self.i += 1
            unique = key == "UNIQUE"
            if unique and self.key in ("KEY", "INDEX"):
                self.i += 1
            name = None if self.key in ("(", "USING") else self.ident()
            self.skip_index_type()
            columns = self.key_parts()
            self.skip_index_options()
            return ast.IndexDef(name, columns, unique=unique)
        return None

    def key_parts(self) -> tuple[str, ...]:
        """``(col [(len)] [ASC|DESC], ...)``: the column names."""
        self.expect("(")
        names = []
        while True:
            if self.key == "(":
                raise not_supported("functional key parts")
            names.append(self.ident())
            if self.accept("("):
                self.integer()
                self.expect(")")
            if not self.accept("ASC"):
                self.accept("DESC")
            if not self.accept(","):
                break
        self.expect(")")
        return tuple(names)

    def skip_index_type(self) -> None:
        if self.accept("USING"):
            if not (self.accept("BTREE") or self.accept("HASH")):
                self.error()

    def skip_index_options(self) -> None:
        while True:
            if self.key == "USING":
                self.skip_index_type()
            elif self.accept("COMMENT"):
                self.string()
            elif self.key in ("VISIBLE", "INVISIBLE"):
                self.i += 1
            elif self.key in ("KEY_BLOCK_SIZE", "ALGORITHM", "LOCK"):
                self.i += 1
                self.accept("=")
                self.option_value()
            else:
                return

    def column_def(self) -> ast.ColumnDef:
        name = self.ident()
        type_name = self.any_word().upper()
        if type_name == "DOUBLE" and self.accept("PRECISION"):
            type_name = "DOUBLE PRECISION"
        length = scale = None
        values: tuple[str, ...] = ()
        if self.accept("("):
            if type_name in ("ENUM", "SET"):
                members = [self.string()]
                while self.accept(","):
                    members.append(self.string())
                values = tuple(members)
            else:
                length = self.integer()
                if self.accept(","):
                    scale = self.integer()
            self.expect(")")
        unsigned = zerofill = auto_increment = primary_key = unique = False
        charset = collation = comment = None
        nullable: bool | None = None
        default = on_update = None
        while True:
            key = self.key
            if self.toks[self.i][0] is not K_WORD:
                break
            self.i += 1
            if key == "UNSIGNED":
                unsigned = True
            elif key == "SIGNED":
                pass
            elif key == "ZEROFILL":
                zerofill = unsigned = True
            elif key == "BINARY":
                collation = collation or "binary"
            elif key == "NOT":
                self.expect("NULL")
                nullable = False
            elif key == "NULL":
                nullable = True
            elif key == "CHARACTER" or key == "CHARSET":
                if key == "CHARACTER":
                    self.expect("SET")
                charset = self.name_or_string()
            elif key == "COLLATE":
                collation = self.name_or_string()
            elif key == "DEFAULT":
                default = self.column_default()
            elif key == "ON":
                self.expect("UPDATE")
                on_update = self.column_default()
            elif key == "AUTO_INCREMENT":
                auto_increment = True
            elif key == "PRIMARY":
                self.expect("KEY")
                primary_key = True
            elif key == "KEY":
                primary_key = True
            elif key == "UNIQUE":
                unique = True
                self.accept("KEY")
            elif key == "COMMENT":
                comment = self.string()
            elif key in ("VISIBLE", "INVISIBLE"):
                pass
            elif key in ("COLUMN_FORMAT", "STORAGE"):
                self.any_word()
            elif key in ("GENERATED", "AS"):
                raise not_supported("generated columns")
            elif key == "REFERENCES":
                raise not_supported("FOREIGN KEY")
            elif key in ("CHECK", "CONSTRAINT"):
                raise not_supported("CHECK constraints")
            else:
                self.i -= 1
                self.error()
        return ast.ColumnDef(
            name, type_name, length, scale, values, unsigned, zerofill, charset, collation,
            nullable, default, on_update, auto_increment, primary_key, unique, comment)

    def column_default(self) -> ast.Expression:
        """A DEFAULT / ON UPDATE value: a signed literal, a niladic call, ``(expr)``."""
        if self.accept("("):
            expr = self.expr()
            self.expect(")")
            return expr
        expr = self.unary()
        if isinstance(expr, ast.Literal | ast.FuncCall):
            return expr
        self.i -= 1
        self.error()

    def option_value(self) -> str:
        kind, _, value, _, _ = self.toks[self.i]
        if kind in (K_WORD, K_QUOTED, K_STRING):
            self.i += 1
            text: str = value
            return text
        if kind is K_NUMBER:
            self.i += 1
            return str(value)
        self.error()

    def options(self) -> tuple[tuple[str, str], ...]:
        """Table or database options up to the end of the statement."""
        result = []
        while self.toks[self.i][0] is K_WORD:
            key = self.key
            if key in ("PARTITION", "AS", "SELECT", "IGNORE", "REPLACE", "START"):
                if key == "PARTITION":
                    raise not_supported("PARTITION BY")
                break
            self.i += 1
            if key == "DEFAULT":
                key = self.key
                self.i += 1
            if key == "CHARACTER":
                self.expect("SET")
                key = "CHARSET"
            self.accept("=")
            result.append((key, self.option_value()))
            self.accept(",")
        return tuple(result)

    def drop(self) -> ast.Statement:
        self.i += 1
        key = self.key
        if key in ("TABLE", "TABLES") or (key == "TEMPORARY" and self.peek_key() == "TABLE"):
            temporary = self.accept("TEMPORARY")
            self.i += 1
            if_exists = self.accept_seq("IF", "EXISTS")
            tables = [self.table_name()]
            while self.accept(","):
                tables.append(self.table_name())
            if not self.accept("RESTRICT"):
                self.accept("CASCADE")
            return ast.DropTable(tuple(tables), if_exists, temporary)
        if key == "DATABASE" or key == "SCHEMA":
            self.i += 1
            if_exists = self.accept_seq("IF", "EXISTS")
            return ast.DropDatabase(self.ident(), if_exists)
        if key == "INDEX":
            self.i += 1
            name = self.ident()
            self.expect("ON")
            table = self.table_name()
            self.skip_index_options()
            return ast.DropIndex(name, table)
        if key == "USER":
            self.i += 1
            if_exists = self.accept_seq("IF", "EXISTS")
            return ast.DropUser(self.user_list(), if_exists)
        self.i -= 1
        raise not_supported(self.verb_name())

    def truncate(self) -> ast.Truncate:
        self.i += 1
        self.accept("TABLE")
        return ast.Truncate(self.table_name())

    # -- transactions, session ------------------------------------------------------------

    def begin(self) -> ast.Begin:
        self.i += 1
        self.accept("WORK")
        return ast.Begin()

    def start(self) -> ast.Statement:
        self.i += 1
        key = self.key
        if key in _SLAVE:
            self.i += 1
            threads, channel = self.slave_tail("START")
            return ast.StartSlave(threads, channel)
        if key != "TRANSACTION":
            if self.toks[self.i][0] is K_WORD:
                self.i -= 1
                raise not_supported(self.verb_name())
            self.error()
        self.i += 1
        read_only: bool | None = None
        snapshot = False
        if not self.at_end():
            while True:
                if self.accept_seq("WITH", "CONSISTENT", "SNAPSHOT"):
                    snapshot = True
                elif self.accept_seq("READ", "ONLY"):
                    read_only = True
                elif self.accept_seq("READ", "WRITE"):
                    read_only = False
                else:
                    self.error()
                if not self.accept(","):
                    break
        return ast.Begin(read_only, snapshot)

    def stop(self) -> ast.Statement:
        self.i += 1
        if self.key in _SLAVE:
            self.i += 1
            threads, channel = self.slave_tail("STOP")
            return ast.StopSlave(threads, channel)
        self.i -= 1
        if self.toks[self.i + 1][0] is K_WORD:
            raise not_supported(self.verb_name())
        self.i += 1
        self.error()

    def slave_tail(self, verb: str) -> tuple[tuple[str, ...], str | None]:
        """START/STOP SLAVE's ``[thread, ...] [FOR CHANNEL 'c']``."""
        threads: list[str] = []
        if self.key in _THREADS:
            while True:
                if self.key not in _THREADS:
                    self.error()
                threads.append("SQL_THREAD" if self.key == "RELAY_THREAD" else self.key)
                self.i += 1
                if not self.accept(","):
                    break
        if self.key in ("UNTIL", "USER", "PASSWORD", "DEFAULT_AUTH", "PLUGIN_DIR"):
            raise not_supported(f"{verb} SLAVE ... {self.key}")
        return tuple(threads), self.channel()

    def channel(self) -> str | None:
        if self.accept_seq("FOR", "CHANNEL"):
            return self.name_or_string()
        return None

    def commit(self) -> ast.Statement:
        rollback = self.key == "ROLLBACK"
        self.i += 1
        self.accept("WORK")
        if rollback and self.key == "TO":
            raise not_supported("ROLLBACK TO SAVEPOINT")
        if self.accept("AND"):
            if not self.accept("NO"):
                raise not_supported(f"{'ROLLBACK' if rollback else 'COMMIT'} AND CHAIN")
            self.expect("CHAIN")
        if self.key == "RELEASE":
            raise not_supported(f"{'ROLLBACK' if rollback else 'COMMIT'} RELEASE")
        if self.accept("NO"):
            self.expect("RELEASE")
        return ast.Rollback() if rollback else ast.Commit()

    def use(self) -> ast.Use:
        self.i += 1
        return ast.Use(self.ident())

    def set_(self) -> ast.Statement:
        self.i += 1
        if self.key == "TRANSACTION" or (
                self.key in ("GLOBAL", "SESSION", "LOCAL") and self.peek_key() == "TRANSACTION"):
            return self.set_transaction()
        if self.key in ("PASSWORD", "ROLE", "RESOURCE") or (
                self.key == "DEFAULT" and self.peek_key() == "ROLE"):
            raise not_supported(f"SET {'DEFAULT ROLE' if self.key == 'DEFAULT' else self.key}")
        items: list[ast.SetItem] = []
        while True:
            items.append(self.set_item())
            if not self.accept(","):
                return ast.Set(tuple(items))

    def set_item(self) -> ast.SetItem:
        kind, key, value, _, _ = self.toks[self.i]
        if kind is K_WORD:
            if key == "NAMES":
                self.i += 1
                charset = None if self.accept("DEFAULT") else self.name_or_string()
                collation = self.name_or_string() if self.accept("COLLATE") else None
                return ast.SetNames(charset, collation)
            if key == "CHARSET" or (key == "CHARACTER" and self.peek_key() == "SET"):
                self.i += 2 if key == "CHARACTER" else 1
                return ast.SetCharset(None if self.accept("DEFAULT") else self.name_or_string())
        if kind is K_USERVAR:
            self.i += 1
            if not (self.accept("=") or self.accept(":=")):
                self.error()
            return ast.SetVariable(value, self.expr(), "USER")
        scope = None
        if kind is K_WORD and key in _SCOPES and self.peek_key() not in ("=", ":=", "."):
            scope = _SCOPES[key]
            self.i += 1
        elif key == "@@":
            self.i += 1
            if self.key in ("GLOBAL", "SESSION", "LOCAL") and self.peek_key() == ".":
                scope = _SCOPES[self.key]
                self.i += 2
        name = self.variable_name()
        if not (self.accept("=") or self.accept(":=")):
            self.error()
        return ast.SetVariable(name, self.set_value(), scope)

    def variable_name(self) -> str:
        """A system variable name, possibly a component's ``comp.name``."""
        name = self.any_word()
        if self.accept("."):
            name = f"{name}.{self.any_word()}"
        return name

    def set_value(self) -> ast.Expression:
        """A system variable's value: an expression, or a bare word as its text."""
        kind, key, value, _, _ = self.toks[self.i]
        if (kind is K_WORD and key not in ("NULL", "TRUE", "FALSE", "DEFAULT")
                and self.toks[self.i + 1][1] in (",", ";", "")
                and self.toks[self.i + 1][0] in (K_OP, K_EOF)):
            self.i += 1
            return ast.Literal(value)
        return self.expr()

    def set_transaction(self) -> ast.SetTransaction:
        scope = None
        if self.key != "TRANSACTION":
            scope = _SCOPES[self.key]
            self.i += 1
        self.i += 1
        level = None
        read_only = None
        while True:
            if self.accept_seq("ISOLATION", "LEVEL"):
                words = [self.any_word().upper()]
                if words[0] in ("READ", "REPEATABLE"):
                    words.append(self.any_word().upper())
                level = " ".join(words)
                if level not in _ISOLATION_LEVELS:
                    self.i -= len(words)
                    self.error()
            elif self.accept_seq("READ", "WRITE"):
                read_only = False
            elif self.accept_seq("READ", "ONLY"):
                read_only = True
            else:
                self.error()
            if not self.accept(","):
                return ast.SetTransaction(scope, level, read_only)

    # -- SHOW and administration ------------------------------------------------------------

    def show(self) -> ast.Show:
        self.i += 1
        full = self.accept("FULL")
        scope = None
        if self.key in ("GLOBAL", "SESSION", "LOCAL"):
            scope = _SCOPES[self.key]
            self.i += 1
        start = self.i
        key = self.key
        self.i += 1
        kind = key
        new_terms = False
        like = database = file = None
        table = None
        pos = limit = offset = None
        user = None
        if key in ("VARIABLES", "STATUS") and not full:
            like = self.show_like(f"SHOW {key}")
        elif scope is not None:
            self.i -= 1
            self.error()
        elif key in ("DATABASES", "SCHEMAS") and not full:
            kind = "DATABASES"
            like = self.show_like("SHOW DATABASES")
        elif key == "TABLES":
            if self.accept("FROM") or self.accept("IN"):
                database = self.ident()
            like = self.show_like("SHOW TABLES")
        elif key in ("COLUMNS", "FIELDS"):
            kind = "COLUMNS"
            table = self.show_table()
            like = self.show_like("SHOW COLUMNS")
        elif key == "PROCESSLIST":
            pass
        elif full:
            self.i -= 1
            self.error()
        elif key in ("INDEX", "INDEXES", "KEYS"):
            kind = "INDEX"
            table = self.show_table()
            if self.key == "WHERE":
                raise not_supported("SHOW INDEX ... WHERE")
        elif key == "MASTER" and self.accept("STATUS"):
            kind = "MASTER STATUS"
        elif (key == "BINARY" or key == "MASTER") and self.accept("LOGS"):
            kind = "BINARY LOGS"
        elif key == "BINARY" and self.accept_seq("LOG", "STATUS"):
            kind = "MASTER STATUS"
            new_terms = True
        elif key == "BINLOG" and self.accept("EVENTS"):
            kind = "BINLOG EVENTS"
            if self.accept("IN"):
                file = self.string()
            if self.accept("FROM"):
                pos = self.integer()
            if self.accept("LIMIT"):
                limit, offset = self.show_limit()
        elif key in ("PLUGINS", "ENGINES"):
            pass
        elif key == "STORAGE" and self.accept("ENGINES"):
            kind = "ENGINES"
        elif key in ("WARNINGS", "ERRORS"):
            if self.accept("LIMIT"):
                limit, offset = self.show_limit()
        elif key == "CREATE" and self.accept("TABLE"):
            kind = "CREATE TABLE"
            table = self.table_name()
        elif key == "CREATE" and (self.accept("DATABASE") or self.accept("SCHEMA")):
            kind = "CREATE DATABASE"
            self.if_not_exists()
            database = self.ident()
        elif key == "GRANTS":
            if self.accept("FOR"):
                user = self.user_name()
                if self.key == "USING":
                    raise not_supported("SHOW GRANTS ... USING")
        elif key in _SLAVE and self.key in ("STATUS", "HOSTS"):
            kind = f"SLAVE {self.key}"
            new_terms = key == "REPLICA"
            self.i += 1
            if kind == "SLAVE STATUS" and self.key == "FOR":
                raise not_supported("SHOW SLAVE STATUS FOR CHANNEL")
        elif key == "REPLICAS":
            kind = "SLAVE HOSTS"
            new_terms = True
        elif self.toks[start][0] is K_WORD:
            words = [key] + ([self.key] if self.toks[self.i][0] is K_WORD else [])
            raise not_supported("SHOW " + " ".join(words))
        else:
            self.i -= 1
            self.error()
        return ast.Show(kind, scope, like, full, database, table, file, pos, limit, offset,
                        user, new_terms)

    def show_like(self, what: str) -> str | None:
        if self.accept("LIKE"):
            return self.string()
        if self.key == "WHERE":
            raise not_supported(f"{what} ... WHERE")
        return None

    def show_table(self) -> ast.TableName:
        if not (self.accept("FROM") or self.accept("IN")):
            self.error()
        table = self.table_name()
        if self.accept("FROM") or self.accept("IN"):
            table = ast.TableName(table.name, self.ident())
        return table

    def show_limit(self) -> tuple[int, int | None]:
        first = self.integer()
        if self.accept(","):
            return self.integer(), first
        return first, None

    def describe(self) -> ast.Statement:
        self.i += 1
        if self.key in ("SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "FORMAT", "ANALYZE",
                        "(", "TABLE", "WITH", "FOR", "EXTENDED", "PARTITIONS"):
            raise not_supported("EXPLAIN")
        table = self.table_name()
        if not self.at_end():
            raise not_supported("DESCRIBE table column")
        return ast.Show("COLUMNS", table=table)

    def flush(self) -> ast.Flush:
        self.i += 1
        local = self.accept("LOCAL") or self.accept("NO_WRITE_TO_BINLOG")
        targets = []
        while True:
            key = self.key
            if self.toks[self.i][0] is not K_WORD:
                self.error()
            self.i += 1
            if key in ("BINARY", "ENGINE", "ERROR", "GENERAL", "RELAY", "SLOW"):
                self.expect("LOGS")
                if key == "RELAY" and self.key == "FOR":
                    raise not_supported("FLUSH RELAY LOGS FOR CHANNEL")
                targets.append(f"{key} LOGS")
            elif key in ("TABLE", "TABLES"):
                if not (self.at_end() or self.key == ","):
                    raise not_supported("FLUSH TABLES with options")
                targets.append("TABLES")
            elif key in ("LOGS", "STATUS", "PRIVILEGES", "HOSTS", "USER_RESOURCES",
                         "OPTIMIZER_COSTS"):
                targets.append(key)
            else:
                self.i -= 1
                self.error()
            if not self.accept(","):
                return ast.Flush(tuple(targets), local)

    def purge(self) -> ast.Purge:
        self.i += 1
        if not (self.accept("BINARY") or self.accept("MASTER")):
            self.error()
        self.expect("LOGS")
        if self.accept("TO"):
            return ast.Purge(to_file=self.string())
        self.expect("BEFORE")
        return ast.Purge(before=self.expr())

    def reset(self) -> ast.Statement:
        self.i += 1
        if self.accept("MASTER"):
            return ast.ResetMaster(self.integer() if self.accept("TO") else None)
        if self.accept_seq("BINARY", "LOGS", "AND", "GTIDS"):
            return ast.ResetMaster(self.integer() if self.accept("TO") else None)
        if self.key in _SLAVE:
            self.i += 1
            all_ = self.accept("ALL")
            return ast.ResetSlave(all_, self.channel())
        if self.toks[self.i][0] is K_WORD:
            raise not_supported(f"RESET {self.key}")
        self.error()

    def checksum(self) -> ast.Checksum:
        self.i += 1
        if not (self.accept("TABLE") or self.accept("TABLES")):
            self.error()
        tables = [self.table_name()]
        while self.accept(","):
            tables.append(self.table_name())
        mode = None
        if self.key in ("QUICK", "EXTENDED"):
            mode = self.key
            self.i += 1
        return ast.Checksum(tuple(tables), mode)

    def install(self) -> ast.Statement:
        uninstall = self.key == "UNINSTALL"
        self.i += 1
        if self.key == "COMPONENT":
            raise not_supported(f"{'UNINSTALL' if uninstall else 'INSTALL'} COMPONENT")
        self.expect("PLUGIN")
        name = self.ident()
        if uninstall:
            return ast.UninstallPlugin(name)
        self.expect("SONAME")
        return ast.InstallPlugin(name, self.string())

    def shutdown(self) -> ast.Shutdown:
        self.i += 1
        return ast.Shutdown()

    def kill(self) -> ast.Kill:
        self.i += 1
        query = False
        if self.accept("QUERY"):
            query = True
        else:
            self.accept("CONNECTION")
        return ast.Kill(self.integer(), query)

    # -- accounts -----------------------------------------------------------------------------

    def user_name(self) -> ast.UserName:
        kind, key, value, _, _ = self.toks[self.i]
        if key == "CURRENT_USER" or (key == "USER" and self.peek_key() == "("):
            self.i += 1
            if self.accept("("):
                self.expect(")")
            return ast.UserName("", "", current=True)
        if kind not in (K_STRING, K_QUOTED, K_WORD) or (kind is K_WORD and key in RESERVED):
            self.error()
        self.i += 1
        user: str = value
        kind, key, value, _, _ = self.toks[self.i]
        if kind is K_USERVAR:
            self.i += 1
            return ast.UserName(user, value)
        if key == "@":
            self.i += 1
            if self.accept("%"):
                return ast.UserName(user, "%")
            return ast.UserName(user, self.name_or_string())
        return ast.UserName(user)

    def user_list(self) -> tuple[ast.UserName, ...]:
        users = [self.user_name()]
        while self.accept(","):
            users.append(self.user_name())
        return tuple(users)

    def user_specs(self) -> tuple[ast.UserSpec, ...]:
        specs = []
        while True:
            user = self.user_name()
            plugin = password = auth_string = None
            if self.accept("IDENTIFIED"):
                if self.accept("WITH"):
                    plugin = self.name_or_string()
                    if self.accept("AS"):
                        auth_string = self.string()
                    elif self.accept("BY"):
                        password = self.auth_password()
                else:
                    self.expect("BY")
                    password = self.auth_password()
            specs.append(ast.UserSpec(user, plugin, password, auth_string))
            if not self.accept(","):
                return tuple(specs)

    def auth_password(self) -> str:
        if self.accept_seq("RANDOM", "PASSWORD"):
            raise not_supported("IDENTIFIED BY RANDOM PASSWORD")
        return self.string()

    def user_tail(self, verb: str) -> None:
        """What may follow CREATE/ALTER USER's accounts: only REQUIRE NONE is run."""
        self.accept_seq("REQUIRE", "NONE")
        if self.at_end():
            return
        if self.toks[self.i][0] is K_WORD:
            raise not_supported(f"{verb} ... {self.key}")
        self.error()

    def alter(self) -> ast.Statement:
        if self.peek_key() != "USER":
            raise not_supported(self.verb_name())
        self.i += 2
        if_exists = self.accept_seq("IF", "EXISTS")
        users = self.user_specs()
        self.user_tail("ALTER USER")
        return ast.AlterUser(users, if_exists)

    def privileges(self) -> tuple[str, ...]:
        """GRANT/REVOKE's privilege list up to ON."""
        privileges = []
        while True:
            words: list[str] = []
            while self.toks[self.i][0] is K_WORD and not (self.key == "ON" and words):
                words.append(self.key)
                self.i += 1
            if not words:
                self.error()
            if self.key == "(":
                raise not_supported("column privileges")
            privilege = " ".join(words)
            if privilege == "ALL PRIVILEGES":
                privilege = "ALL"
            elif privilege == "REPLICATION REPLICA":
                privilege = "REPLICATION SLAVE"
            privileges.append(privilege)
            if not self.accept(","):
                break
        if self.key != "ON":
            raise not_supported("GRANT/REVOKE of roles")
        self.i += 1
        return tuple(privileges)

    def grant_level(self) -> ast.GrantLevel:
        if self.key in ("FUNCTION", "PROCEDURE"):
            raise not_supported(f"privileges on a {self.key}")
        self.accept("TABLE")
        if self.accept("*"):
            if self.accept("."):
                self.expect("*")
                return ast.GrantLevel("*", "*")
            return ast.GrantLevel(None, "*")
        name = self.ident()
        if self.accept("."):
            if self.accept("*"):
                return ast.GrantLevel(name, "*")
            return ast.GrantLevel(name, self.any_word())
        return ast.GrantLevel(None, name)

    def grant(self) -> ast.Grant:
        self.i += 1
        if self.key == "PROXY":
            raise not_supported("GRANT PROXY")
        privileges = self.privileges()
        level = self.grant_level()
        self.expect("TO")
        users = self.user_list()
        grant_option = self.accept_seq("WITH", "GRANT", "OPTION")
        if self.key in ("WITH", "AS", "REQUIRE", "IDENTIFIED"):
            raise not_supported(f"GRANT ... {self.key}")
        return ast.Grant(privileges, level, users, grant_option)

    def revoke(self) -> ast.Revoke:
        self.i += 1
        if self.key == "IF":
            raise not_supported("REVOKE IF EXISTS")
        if self.key == "PROXY":
            raise not_supported("REVOKE PROXY")
        if self.accept_seq("ALL", "PRIVILEGES", ",", "GRANT", "OPTION") or self.accept_seq(
                "ALL", ",", "GRANT", "OPTION"):
            self.expect("FROM")
            return ast.Revoke(("ALL", "GRANT OPTION"), ast.GrantLevel("*", "*"), self.user_list())
        privileges = self.privileges()
        level = self.grant_level()
        self.expect("FROM")
        return ast.Revoke(privileges, level, self.user_list())

    # -- replication --------------------------------------------------------------------------

    def change(self) -> ast.ChangeMaster:
        self.i += 1
        new_terms = False
        if self.accept("MASTER"):
            pass
        elif self.accept_seq("REPLICATION", "SOURCE"):
            new_terms = True
        elif self.accept_seq("REPLICATION", "FILTER"):
            raise not_supported("CHANGE REPLICATION FILTER")
        else:
            self.error()
        self.expect("TO")
        options: list[tuple[str, ast.ChangeMasterValue]] = []
        while True:
            if self.toks[self.i][0] is not K_WORD:
                self.error()
            name = self.key
            self.i += 1
            if name.startswith("SOURCE_"):
                name = "MASTER_" + name[7:]
            elif name == "GET_SOURCE_PUBLIC_KEY":
                name = "GET_MASTER_PUBLIC_KEY"
            self.expect("=")
            options.append((name, self.change_value(name)))
            if not self.accept(","):
                break
        return ast.ChangeMaster(tuple(options), self.channel(), new_terms)

    def change_value(self, name: str) -> ast.ChangeMasterValue:
        if name == "IGNORE_SERVER_IDS":
            self.expect("(")
            ids: list[int] = []
            if not self.accept(")"):
                ids.append(self.integer())
                while self.accept(","):
                    ids.append(self.integer())
                self.expect(")")
            return tuple(ids)
        kind, _, value, _, _ = self.toks[self.i]
        if kind is K_STRING:
            self.i += 1
            if self.toks[self.i][0] is K_USERVAR:
                raise not_supported(f"{name} = account")
            result: ast.ChangeMasterValue = value
            return result
        if kind is K_NUMBER and type(value) is not float:
            self.i += 1
            result = value
            return result
        if self.key == "NULL":
            raise not_supported(f"{name} = NULL")
        if kind is K_WORD:
            self.i += 1
            return self.toks[self.i - 1][1]
        self.error()

    # -- expressions ------------------------------------------------------------------------

    def expr(self) -> ast.Expression:
        """``expr`` of MySQL's grammar: OR / || at the loosest level."""
        left = self.xor_expr()
        while self.toks[self.i][1] in ("OR", "||"):
            self.i += 1
            left = ast.Binary("OR", left, self.xor_expr())
        return left

    def xor_expr(self) -> ast.Expression:
        left = self.and_expr()
        while self.toks[self.i][1] == "XOR":
            self.i += 1
            left = ast.Binary("XOR", left, self.and_expr())
        return left

    def and_expr(self) -> ast.Expression:
        left = self.not_expr()
        while self.toks[self.i][1] in ("AND", "&&"):
            self.i += 1
            left = ast.Binary("AND", left, self.not_expr())
        return left

    def not_expr(self) -> ast.Expression:
        if self.toks[self.i][1] == "NOT":
            self.i += 1
            return ast.Unary("NOT", self.not_expr())
        return self.bool_primary()

    def bool_primary(self) -> ast.Expression:
        """Comparisons and IS [NOT] NULL, left-associative over predicates."""
        left = self.predicate()
        toks = self.toks
        while True:
            key = toks[self.i][1]
            op = _COMPARISON.get(key)
            if op is not None and toks[self.i][0] is K_OP:
                self.i += 1
                if self.key in ("ANY", "ALL", "SOME") and self.peek_key() == "(":
                    raise not_supported("subqueries")
                left = ast.Binary(op, left, self.predicate())
            elif key == "IS":
                self.i += 1
                negated = self.accept("NOT")
                if self.key in ("TRUE", "FALSE", "UNKNOWN"):
                    raise not_supported(f"IS {self.key}")
                self.expect("NULL")
                left = ast.IsNull(left, negated)
            else:
                return left

    def predicate(self) -> ast.Expression:
        left = self.bit_expr(1)
        toks = self.toks
        key = toks[self.i][1]
        negated = False
        if key == "NOT" and toks[self.i + 1][1] in ("IN", "BETWEEN", "LIKE", "REGEXP", "RLIKE"):
            negated = True
            self.i += 1
            key = toks[self.i][1]
        if key == "IN":
            self.i += 1
            self.expect("(")
            if self.key in ("SELECT", "WITH"):
                raise not_supported("subqueries")
            items = [self.expr()]
            while self.accept(","):
                items.append(self.expr())
            self.expect(")")
            return ast.InList(left, tuple(items), negated)
        if key == "BETWEEN":
            self.i += 1
            low = self.bit_expr(1)
            self.expect("AND")
            return ast.Between(left, low, self.predicate(), negated)
        if key == "LIKE":
            self.i += 1
            pattern = self.unary()
            escape = self.unary() if self.accept("ESCAPE") else None
            return ast.Like(left, pattern, negated, escape)
        if key in ("REGEXP", "RLIKE", "SOUNDS", "MEMBER"):
            raise not_supported(key)
        return left

    def bit_expr(self, min_power: int) -> ast.Expression:
        """Arithmetic and bitwise operators by precedence climbing (all left-assoc)."""
        left = self.unary()
        toks = self.toks
        while True:
            key = toks[self.i][1]
            power = _BIT_OPS.get(key)
            if power is None or power < min_power:
                return left
            self.i += 1
            right = self.bit_expr(power + 1)
            op = "%" if key == "MOD" else key
            left = ast.Binary(op, left, right)

    def unary(self) -> ast.Expression:
        """MySQL's simple_expr: prefix ``- + ~ !`` over a primary."""
        key = self.toks[self.i][1]
        if key == "-":
            self.i += 1
            operand = self.unary()
            if isinstance(operand, ast.Literal):
                value = operand.value
                if isinstance(value, int | Decimal | float) and not isinstance(value, bool):
                    return ast.Literal(-value)
            return ast.Unary("-", operand)
        if key == "+":
            self.i += 1
            return self.unary()
        if key == "!":
            self.i += 1
            return ast.Unary("NOT", self.unary())
        if key == "~":
            self.i += 1
            return ast.Unary("~", self.unary())
        expr = self.primary()
        key = self.toks[self.i][1]
        if key == "COLLATE":
            raise not_supported("COLLATE in expressions")
        return expr

    def primary(self) -> ast.Expression:
        toks = self.toks
        kind, key, value, _, end = toks[self.i]
        self.i += 1
        if kind is K_NUMBER:
            return ast.Literal(value)
        if kind is K_WORD:
            nxt = toks[self.i][1]
            if key == "CASE":
                return self.case()
            if nxt == "(" and toks[self.i][0] is K_OP:
                return self.call(key)
            if nxt == "." and toks[self.i][0] is K_OP:
                if key in RESERVED:
                    self.i -= 1
                    self.error()
                return self.qualified(value)
            if key == "NULL":
                return ast.Literal(None)
            if key == "TRUE":
                return ast.Literal(True)
            if key == "FALSE":
                return ast.Literal(False)
            if key == "DEFAULT":
                return ast.Default()
            if key in _NILADIC:
                return ast.FuncCall(key)
            nkind = toks[self.i][0]
            if nkind is K_STRING or nkind is K_BYTES:
                if key[0] == "_" or (key == "N" and toks[self.i][3] == end):
                    return self.introduced(key)
                if key in ("DATE", "TIME", "TIMESTAMP"):
                    raise not_supported("temporal literals")
            if key in ("INTERVAL", "EXISTS", "BINARY", "MATCH", "ROW"):
                raise not_supported(key)
            if key in RESERVED:
                self.i -= 1
                self.error()
            return ast.Column(value)
        if kind is K_STRING:
            if toks[self.i][0] is K_STRING:
                parts = [value]
                while toks[self.i][0] is K_STRING:
                    parts.append(toks[self.i][2])
                    self.i += 1
                return ast.Literal("".join(parts))
            return ast.Literal(value)
        if kind is K_QUOTED:
            if toks[self.i][1] == ".":
                return self.qualified(value)
            return ast.Column(value)
        if kind is K_USERVAR:
            return ast.UserVar(value)
        if kind is K_BYTES:
            return ast.Literal(value)
        if key == "(":
            if self.key in ("SELECT", "WITH"):
                raise not_supported("subqueries")
            expr = self.expr()
            if self.key == ",":
                raise not_supported("row constructors")
            self.expect(")")
            return expr
        if key == "@@":
            return self.system_variable()
        if key == "?":
            self.placeholders += 1
            return ast.Placeholder(self.placeholders - 1)
        self.i -= 1
        self.error()

    def qualified(self, first: str) -> ast.Column:
        parts = [first]
        while len(parts) < 3 and self.accept("."):
            parts.append(self.any_word())
        return _column(parts)

    def introduced(self, charset: str) -> ast.Literal:
        """``_charset'..'`` or ``N'..'``: the string, as bytes for ``_binary``."""
        value: str | bytes = self.toks[self.i][2]
        self.i += 1
        if charset == "_BINARY" and isinstance(value, str):
            value = value.encode("utf-8", "surrogateescape")
        elif charset != "_BINARY" and isinstance(value, bytes):
            value = value.decode("utf-8", "surrogateescape")
        return ast.Literal(value)

    def system_variable(self) -> ast.SysVar:
        scope = None
        if self.key in ("GLOBAL", "SESSION", "LOCAL") and self.peek_key() == ".":
            scope = _SCOPES[self.key]
            self.i += 2
        return ast.SysVar(self.variable_name(), scope)

    def call(self, name: str) -> ast.FuncCall:
        self.i += 1  # (
        if self.accept(")"):
            call = ast.FuncCall(name)
        elif self.key == "*" and self.peek_key() == ")":
            self.i += 2
            call = ast.FuncCall(name, star=True)
        else:
            distinct = self.accept("DISTINCT")
            if self.key in ("SELECT", "WITH"):
                raise not_supported("subqueries")
            args = [self.expr()]
            while self.accept(","):
                args.append(self.expr())
            if self.key != ")":
                if self.toks[self.i][0] is K_WORD:
                    raise not_supported(f"{name}(... {self.key} ...)")
                self.error()
            self.i += 1
            call = ast.FuncCall(name, tuple(args), distinct)
        if self.key == "OVER":
            raise not_supported("window functions")
        return call

    def case(self) -> ast.Case:
        operand = None if self.key == "WHEN" else self.expr()
        whens = []
        while self.accept("WHEN"):
            condition = self.expr()
            self.expect("THEN")
            whens.append(ast.When(condition, self.expr()))
        if not whens:
            self.error()
        else_ = self.expr() if self.accept("ELSE") else None
        self.expect("END")
        return ast.Case(operand, tuple(whens), else_)


def _column(parts: list[str]) -> ast.Column:
    if len(parts) == 3:
        return ast.Column(parts[2], parts[1], parts[0])
    if len(parts) == 2:
        return ast.Column(parts[1], parts[0])
    return ast.Column(parts[0])


_STATEMENTS: Final[dict[str, Callable[[_Parser], ast.Statement]]] = {
    "SELECT": _Parser.select,
    "INSERT": _Parser.insert,
    "REPLACE": _Parser.insert,
    "UPDATE": _Parser.update,
    "DELETE": _Parser.delete,
    "CREATE": _Parser.create,
    "DROP": _Parser.drop,
    "TRUNCATE": _Parser.truncate,
    "BEGIN": _Parser.begin,
    "START": _Parser.start,
    "STOP": _Parser.stop,
    "COMMIT": _Parser.commit,
    "ROLLBACK": _Parser.commit,
    "USE": _Parser.use,
    "SET": _Parser.set_,
    "SHOW": _Parser.show,
    "DESCRIBE": _Parser.describe,
    "DESC": _Parser.describe,
    "EXPLAIN": _Parser.describe,
    "FLUSH": _Parser.flush,
    "PURGE": _Parser.purge,
    "RESET": _Parser.reset,
    "CHECKSUM": _Parser.checksum,
    "INSTALL": _Parser.install,
    "UNINSTALL": _Parser.install,
    "SHUTDOWN": _Parser.shutdown,
    "KILL": _Parser.kill,
    "GRANT": _Parser.grant,
    "REVOKE": _Parser.revoke,
    "CHANGE": _Parser.change,
    "ALTER": _Parser.alter,
}
