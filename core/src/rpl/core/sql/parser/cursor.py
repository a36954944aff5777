"""The parser's cursor over one statement's tokens, and what every statement family shares.

:class:`Parser` holds the token list (:func:`rpl.core.sql.lexer.tokenize`) and a cursor
into it; its methods read the small things any rule reads (a keyword, an identifier, a
string, an integer, a table name) and report errors at the cursor. The grammar rules are
functions over a :class:`Parser` in the family modules beside this one; each consumes
exactly its rule's tokens and leaves the cursor on the first token after them. A
statement's rule is called with the cursor on the statement's first word.

Also here: MySQL's reserved words, :func:`not_supported` (the 1235 for a statement or
clause outside the subset), the scope keywords of SET and SHOW, and :data:`Rule`, the
type of an entry of a family's ``STATEMENTS`` table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NoReturn, TypeAlias

from rpl.core.errors import ER_NOT_SUPPORTED_YET, MySQLError
from rpl.core.sql import ast
from rpl.core.sql.lexer import (
    K_EOF,
    K_NUMBER,
    K_OP,
    K_QUOTED,
    K_STRING,
    K_WORD,
    parse_error,
    tokenize,
)

RESERVED: Final = frozenset(
    """
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
""".split()
)
"""MySQL 8.0's reserved words: never an unquoted identifier or alias."""

SCOPES: Final = {
    "GLOBAL": "GLOBAL",
    "SESSION": "SESSION",
    "LOCAL": "SESSION",
    "PERSIST": "PERSIST",
    "PERSIST_ONLY": "PERSIST_ONLY",
}
"""A variable scope keyword -> the scope it names (LOCAL is SESSION)."""
_END: Final = frozenset((";", ""))
_ONE_WORD_VERBS: Final = frozenset(
    (
        "CALL",
        "DEALLOCATE",
        "DO",
        "EXECUTE",
        "HANDLER",
        "HELP",
        "PREPARE",
        "RESIGNAL",
        "RESTART",
        "SAVEPOINT",
        "SIGNAL",
        "TABLE",
        "VALUES",
        "WITH",
        "XA",
        "BINLOG",
        "CLONE",
    )
)


def not_supported(what: str) -> MySQLError:
    """MySQL's 1235 for ``what``, a valid statement or clause the server does not run."""
    return MySQLError.of(ER_NOT_SUPPORTED_YET, what)


class Parser:
    """One statement's parse: the token list and a cursor into it.

    ``error()`` reports the token under the cursor; ``placeholders`` counts the ``?``
    read so far (each becomes the next :class:`~rpl.core.sql.ast.Placeholder`).
    """

    __slots__ = ("sql", "toks", "i", "placeholders")

    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.toks = tokenize(sql)
        self.i = 0
        self.placeholders = 0

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
                self.toks[self.i][0] is K_WORD and self.key not in RESERVED
            ):
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

    def if_not_exists(self) -> bool:
        return self.accept_seq("IF", "NOT", "EXISTS")

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


Rule: TypeAlias = Callable[[Parser], ast.Statement]
"""A statement's rule: called with the cursor on the statement's first word."""
