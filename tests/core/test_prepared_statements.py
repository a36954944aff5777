"""Prepared statements against real clients: sysbench in its default ``--db-ps-mode=auto``,
mysql-connector-python's ``cursor(prepared=True)`` over every column type (compared with
what the text protocol returns), SQL PREPARE / EXECUTE / DEALLOCATE PREPARE with MySQL's
errors, the statement count and its bound, and a prepared INSERT replicating.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import datetime
import re
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import mysql.connector
import pymysql
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpl.core.testing.binlogs import logged_row_changes
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import create_replication_user, replicate, wait_caught_up


def status(server: ServerProcess, name: str) -> int:
    rows = server.query(f"SHOW GLOBAL STATUS LIKE '{name}'")
    assert len(rows) == 1, rows
    return int(rows[0][1])


# ------------------------------------------------------------------- sysbench
def sysbench(port: int, workload: str, phase: str, *extra: str) -> str:
    """sysbench with its default prepared-statement mode (no ``--db-ps-mode``)."""
    path = shutil.which("sysbench")
    assert path, "sysbench is not installed (.ci/run installs it with apt-get)"
    command = [
        path,
        workload,
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        f"--mysql-port={port}",
        "--mysql-user=root",
        "--mysql-db=sbtest",
        "--tables=2",
        "--table-size=500",
        *extra,
        phase,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        f"sysbench {workload} {phase} failed:\n{done.stdout}\n{done.stderr}"
    )
    assert "FATAL" not in done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def sb_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A server with thread_handling=pool-of-threads, as the benchmark runs it (the
    other tests here run the default, a thread per connection)."""
    server = ServerProcess(
        tmp_path_factory.mktemp("sysbench-ps") / "data",
        options=["--thread-handling=pool-of-threads"],
    ).start()
    server.query("CREATE DATABASE sbtest")
    yield server
    server.stop()


@pytest.mark.parametrize(
    ("workload", "threads", "prepared"),
    [("oltp_point_select", 4, True), ("oltp_insert", 4, False), ("oltp_read_write", 1, True)],
)
def test_sysbench_default_ps_mode(
    sb_server: ServerProcess, workload: str, threads: int, prepared: bool
) -> None:
    """No statement fails: ``--mysql-ignore-errors=none`` makes any error fatal, and
    oltp_read_write runs in one thread, where no deadlock can occur. Every statement of
    oltp_point_select and oltp_read_write is a prepared one (Com_stmt_execute counts
    them all); oltp_insert sends its INSERTs as text in every mode (its Lua script
    prepares nothing).
    """
    sysbench(sb_server.port, workload, "prepare")
    executed = status(sb_server, "Com_stmt_execute")
    out = sysbench(
        sb_server.port,
        workload,
        "run",
        f"--threads={threads}",
        "--time=2",
        "--mysql-ignore-errors=none",
    )
    queries = int(re.search(r"queries:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    errors = int(re.search(r"ignored errors:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    assert errors == 0
    assert queries > 0
    assert status(sb_server, "Com_stmt_execute") - executed == (queries if prepared else 0)
    sysbench(sb_server.port, workload, "cleanup")
    assert status(sb_server, "Prepared_stmt_count") == 0  # freed as each connection ended


# ------------------------------------------------- mysql-connector-python
COLUMNS = """
    id INT PRIMARY KEY,
    ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT, i INT, iu INT UNSIGNED,
    bi BIGINT, bu BIGINT UNSIGNED,
    f FLOAT, d DOUBLE, dec1 DECIMAL(20,6),
    dt DATE, dtm DATETIME(6), ts TIMESTAMP, tm TIME(6), yr YEAR,
    ch CHAR(10), vc VARCHAR(50), tx TEXT,
    bn BINARY(4), vb VARBINARY(20), bl BLOB,
    en ENUM('a','b','c'), st SET('x','y','z'), js JSON
"""

FULL_ROW = (
    1,
    -128,
    255,
    -32768,
    -8388608,
    -2147483648,
    4294967295,
    -(2**63),
    2**64 - 1,
    -1.5,
    -2.25e-300,
    Decimal("-12345678901234.123456"),
    datetime.date(2024, 2, 29),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 678),
    datetime.datetime(2038, 1, 19, 3, 14, 7),
    datetime.timedelta(days=-1),
    2024,
    "chars",
    "héllo wörld 😀",
    "line1\nline2 'quoted' \\ back",
    b"\x00\x01\x02\x03",
    b"\x00bin\xff",
    b"\x00\x00blob\x00\xfe\xff",
    "b",
    "x,z",
    '{"k": [1, 2.5, "s", null, true]}',
)
NULL_ROW = (2, *([None] * (len(FULL_ROW) - 1)))
MAX_ROW = (
    3,
    127,
    0,
    32767,
    8388607,
    2147483647,
    0,
    2**63 - 1,
    0,
    3.5,
    1.7976931348623157e308,
    Decimal("99999999999999.999999"),
    datetime.date(1000, 1, 1),
    datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
    datetime.datetime(1970, 1, 1, 0, 0, 1),
    "-838:59:59.000000",
    1901,
    "",
    "",
    "",
    b"\xff\xff\xff\xff",
    b"",
    b"",
    "c",
    "",
    "[]",
)

EXPECTED = {
    # what both protocols return: TIME, YEAR and JSON come back as text (the server's
    # column types for them), TIMESTAMP as DATETIME
    1: (
        *FULL_ROW[:15],
        "-24:00:00.000000",
        "2024",
        *FULL_ROW[17:],
    ),
    2: NULL_ROW,
    3: (*MAX_ROW[:16], "1901", *MAX_ROW[17:]),
}


@pytest.fixture(scope="module")
def typed_server(server: ServerProcess) -> ServerProcess:
    server.query("CREATE DATABASE typed")
    server.query(f"CREATE TABLE typed.t ({COLUMNS})")
    return server


def connector(server: ServerProcess, database: str = "typed", **kwargs: Any) -> Any:
    return mysql.connector.connect(
        host="127.0.0.1", port=server.port, user="root", database=database, **kwargs
    )


def test_connector_prepared_cursor_every_column_type(typed_server: ServerProcess) -> None:
    connection = connector(typed_server)
    try:
        cursor = connection.cursor(prepared=True)
        marks = ", ".join(["?"] * len(FULL_ROW))
        for row in (FULL_ROW, NULL_ROW, MAX_ROW):
            cursor.execute(f"INSERT INTO t VALUES ({marks})", row)
        connection.commit()
        cursor.execute("SELECT * FROM t WHERE id BETWEEN ? AND ? ORDER BY id", (1, 3))
        prepared_rows = cursor.fetchall()
        text = connection.cursor()
        text.execute("SELECT * FROM t ORDER BY id")
        text_rows = text.fetchall()
        # column by column, so a failure names the column
        for number, prepared_row, text_row in zip((1, 2, 3), prepared_rows, text_rows, strict=True):
            for position, (got, as_text, want) in enumerate(
                zip(prepared_row, text_row, EXPECTED[number], strict=True)
            ):
                assert got == want, (number, position)
                assert type(got) is type(want), (number, position)
                assert as_text == want, (number, position)
        assert len(prepared_rows) == 3
        # one column at a time, each through a parameter of its own type
        for position, value in enumerate(FULL_ROW[1:], 1):
            cursor.execute("SELECT id FROM t WHERE id = ? AND ? IS NOT NULL", (1, value))
            assert cursor.fetchall() == [(1,)], position
    finally:
        connection.close()


def test_connector_prepared_statement_writes_and_limits(typed_server: ServerProcess) -> None:
    connection = connector(typed_server, autocommit=True)
    try:
        cursor = connection.cursor(prepared=True)
        cursor.execute("INSERT INTO t (id, vc) VALUES (?, ?), (?, ?)", (10, "ten", 11, "eleven"))
        assert cursor.rowcount == 2
        cursor.execute("UPDATE t SET vc = ? WHERE id = ?", ("TEN", 10))
        assert cursor.rowcount == 1
        cursor.execute("SELECT id, vc FROM t WHERE id >= ? ORDER BY id LIMIT ?", (10, 1))
        assert cursor.fetchall() == [(10, "TEN")]
        cursor.execute("SELECT id FROM t WHERE id >= ? ORDER BY id LIMIT ? OFFSET ?", (10, 5, 1))
        assert cursor.fetchall() == [(11,)]
        with pytest.raises(mysql.connector.Error) as failure:
            cursor.execute("INSERT INTO t (id) VALUES (?)", (10,))
        assert (failure.value.errno, failure.value.sqlstate) == (1062, "23000")
        assert failure.value.msg == "Duplicate entry '10' for key 't.PRIMARY'"
        cursor.execute("DELETE FROM t WHERE id IN (?, ?)", (10, 11))
        assert cursor.rowcount == 2
    finally:
        connection.close()


# ------------------------------------------------------------------ SQL PREPARE
@pytest.fixture
def sql(server: ServerProcess) -> Any:
    server.query("CREATE DATABASE IF NOT EXISTS sqlps")
    server.query("CREATE TABLE IF NOT EXISTS sqlps.t (id INT PRIMARY KEY, v VARCHAR(20))")
    connection = server.connect(database="sqlps")
    yield connection.cursor()
    connection.close()


def error(cursor: Any, statement: str) -> tuple[int, str]:
    with pytest.raises(pymysql.MySQLError) as failure:
        cursor.execute(statement)
    code, message = failure.value.args
    return code, message


def test_sql_prepare_execute_deallocate(sql: Any, server: ServerProcess) -> None:
    sql.execute("PREPARE ins FROM 'INSERT INTO t VALUES (?, ?)'")
    sql.execute("SET @id = 1, @v = 'it''s'")
    assert sql.execute("EXECUTE ins USING @id, @v") == 1
    sql.execute("SET @id = 2, @v = NULL")
    sql.execute("EXECUTE ins USING @id, @v")
    sql.execute("SET @q = 'SELECT id, v FROM t WHERE id <= ? ORDER BY id'")
    sql.execute("PREPARE sel FROM @q")
    questions = status(server, "Questions")
    sql.execute("EXECUTE sel USING @id")
    assert sql.fetchall() == ((1, "it's"), (2, None))
    # one question for the EXECUTE (its SELECT is not another), then the new connection's
    # SET AUTOCOMMIT (PyMySQL's) and SHOW STATUS
    assert status(server, "Questions") - questions == 3
    assert sql.execute("EXECUTE sel USING @nothing") == 0  # an unset variable is NULL
    sql.execute("DEALLOCATE PREPARE sel")
    assert error(sql, "EXECUTE sel USING @id") == (
        1243,
        "Unknown prepared statement handler (sel) given to EXECUTE",
    )
    assert error(sql, "EXECUTE ins USING @id") == (1210, "Incorrect arguments to EXECUTE")
    assert error(sql, "EXECUTE ins") == (1210, "Incorrect arguments to EXECUTE")
    assert error(sql, "DROP PREPARE nope") == (
        1243,
        "Unknown prepared statement handler (nope) given to DEALLOCATE PREPARE",
    )
    code, message = error(sql, "PREPARE bad FROM 'SELEC 1'")
    assert code == 1064 and "near 'SELEC 1'" in message
    # a PREPARE that fails under a name in use leaves no statement of that name
    code, _ = error(sql, "PREPARE ins FROM 'INSERT INTO t VALUES ('")
    assert code == 1064
    assert error(sql, "EXECUTE ins USING @id, @v")[0] == 1243
    assert server.query("SELECT id, v FROM sqlps.t ORDER BY id") == [(1, "it's"), (2, None)]
    sql.execute("DELETE FROM t")


def test_prepare_opens_no_transaction(sql: Any, server: ServerProcess) -> None:
    """The PREPARE of a SELECT learns its columns by running it on no row; with
    autocommit=0 that run leaves no transaction open (SERVER_STATUS_IN_TRANS), as a
    PREPARE in MySQL reads nothing. Its execution does open one, as a SELECT does.
    """
    connection = server.connect(database="sqlps", autocommit=False)
    try:
        cursor = connection.cursor()
        cursor.execute("PREPARE s FROM 'SELECT id, v FROM t WHERE id = ?'")
        assert not connection.server_status & 1
        cursor.execute("SET @a = 1")
        cursor.execute("EXECUTE s USING @a")
        assert cursor.description[1][0] == "v"
        cursor.execute("SET @b = 2")  # an OK packet, with the status after the SELECT
        assert connection.server_status & 1
        connection.rollback()
    finally:
        connection.close()


def test_statement_count_and_its_bound(server: ServerProcess) -> None:
    base = status(server, "Prepared_stmt_count")
    first = server.connect()
    cursor = first.cursor()
    cursor.execute("SET GLOBAL max_prepared_stmt_count = %s", (base + 2,))
    try:
        cursor.execute("PREPARE a FROM 'SELECT 1'")
        cursor.execute("PREPARE b FROM 'SELECT 2'")
        cursor.execute("PREPARE b FROM 'SELECT 3'")  # replaces b: still two
        assert status(server, "Prepared_stmt_count") == base + 2
        assert error(cursor, "PREPARE c FROM 'SELECT 4'") == (
            1461,
            "Can't create more than max_prepared_stmt_count statements "
            f"(current value: {base + 2})",
        )
        cursor.execute("EXECUTE b")
        assert cursor.fetchall() == ((3,),)
        cursor.execute("DEALLOCATE PREPARE a")
        assert status(server, "Prepared_stmt_count") == base + 1
        first.ping()
        # COM_RESET_CONNECTION frees the connection's statements
        first._execute_command(0x1F, b"")  # noqa: SLF001 - PyMySQL has no public call
        first._read_ok_packet()  # noqa: SLF001
        assert status(server, "Prepared_stmt_count") == base
        cursor.execute("PREPARE a FROM 'SELECT 1'")
        assert status(server, "Prepared_stmt_count") == base + 1
    finally:
        cursor.execute("SET GLOBAL max_prepared_stmt_count = 16382")
        first.close()
    # ... and so does the connection's end
    for _ in range(50):
        if status(server, "Prepared_stmt_count") == base:
            break
    assert status(server, "Prepared_stmt_count") == base
    assert server.query("SELECT @@max_prepared_stmt_count") == [(16382,)]


# ------------------------------------------------------------------ replication
def test_prepared_insert_replicates(tmp_path: Path) -> None:
    """A prepared INSERT and UPDATE, with every kind of value, reach a replica as rows;
    the ROWS_QUERY event holds the statement with its values, which parses back to them.
    """
    source = ServerProcess(tmp_path / "source", options=["--server-id=1"]).start()
    replica = ServerProcess(tmp_path / "replica", options=["--server-id=2"]).start()
    try:
        create_replication_user(source)
        source.query("CREATE DATABASE r")
        source.query(
            "CREATE TABLE r.t (id INT PRIMARY KEY, v VARCHAR(30), b BLOB, d DECIMAL(8,2), "
            "w DATETIME(3))"
        )
        replicate(replica, source)
        connection = connector(source, "r", autocommit=True)
        cursor = connection.cursor(prepared=True)
        text = connection.cursor()
        text.execute("SET SESSION binlog_rows_query_log_events = ON")
        values = (
            7,
            "o'k\n",
            b"\x00\xff",
            Decimal("-1.50"),
            datetime.datetime(2024, 5, 6, 7, 8, 9, 500000),
        )
        cursor.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", values)
        cursor.execute("UPDATE t SET v = ? WHERE id = ?", ("new", 7))
        cursor.execute("CREATE TABLE t2 (id INT PRIMARY KEY, v VARCHAR(10))")  # DDL, prepared
        text.execute("SET SESSION binlog_format = STATEMENT")
        cursor.execute("INSERT INTO t2 VALUES (?, ?)", (1, "a'b"))
        connection.close()
        wait_caught_up(source, replica)
        want = [
            (
                7,
                "new",
                b"\x00\xff",
                Decimal("-1.50"),
                datetime.datetime(2024, 5, 6, 7, 8, 9, 500000),
            )
        ]
        assert source.query("SELECT * FROM r.t") == want
        assert replica.query("SELECT * FROM r.t") == want
        assert replica.query("SELECT * FROM r.t2") == [(1, "a'b")]
        changes = list(logged_row_changes(tmp_path / "source", "r", "t"))
        assert [kind for kind, _, _ in changes] == ["insert", "update"]
        events = source.query("SHOW BINLOG EVENTS")
        queries = [row[5] for row in events if row[2] == "Rows_query"]
        assert queries == [
            "# INSERT INTO t VALUES (7, 'o\\'k\\n', X'00FF', -1.50, '2024-05-06 07:08:09.500000')",
            "# UPDATE t SET v = 'new' WHERE id = 7",
        ]
        query_texts = [row[5] for row in events if row[2] == "Query"]
        assert "use `r`; CREATE TABLE t2 (id INT PRIMARY KEY, v VARCHAR(10))" in query_texts
        assert "use `r`; INSERT INTO `r`.`t2` (`id`,`v`) VALUES (1,'a\\'b')" in query_texts
    finally:
        replica.stop()
        source.stop()


# ------------------------------------------------------------------------ parser
def test_parse_prepared_statement_sql() -> None:
    from rpl.core.errors import MySQLError
    from rpl.core.sql import ast
    from rpl.core.sql.parser import parse

    assert parse("PREPARE s FROM 'SELECT ?'") == ast.Prepare("s", text="SELECT ?")
    assert parse("prepare `my s` from @q;") == ast.Prepare("my s", variable="q")
    assert parse("EXECUTE s") == ast.ExecutePrepared("s")
    assert parse("EXECUTE s USING @a, @`b c`") == ast.ExecutePrepared("s", ("a", "b c"))
    assert parse("DEALLOCATE PREPARE s") == ast.DeallocatePrepare("s")
    assert parse("DROP PREPARE s") == ast.DeallocatePrepare("s")
    # a negative decimal literal keeps every digit (the bound text of a DECIMAL(65, 30)
    # parameter reads back as that parameter; -x rounded to 28 digits once)
    long = "1000000000000000000000000000000000.000000000000000000000000000001"
    assert parse(f"SELECT -{long}") == ast.Select(
        (ast.SelectItem(ast.Literal(Decimal("-" + long)), None, f"-{long}"),)
    )
    for bad in ("PREPARE s", "PREPARE s FROM 1", "EXECUTE s USING 1", "EXECUTE s USING @a,"):
        with pytest.raises(MySQLError) as failure:
            parse(bad)
        assert failure.value.errno == 1064, bad


# ------------------------------------------------------------- binding, in process

PARAMETER_VALUES = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False, places=4),
    st.text(),
    st.binary(),
)
TEMPLATES = (
    "INSERT INTO t (a, b, c) VALUES (?, ?, ?)",
    "SELECT a, b + ? FROM t WHERE a = ? AND b IN (?, 'x?y') ORDER BY a",
    "UPDATE `t?` SET b = ? WHERE a BETWEEN ? AND ? /* ? */",
)


@given(st.sampled_from(TEMPLATES), st.lists(PARAMETER_VALUES, min_size=3, max_size=3))
def test_bound_text_parses_to_the_bound_statement(template: str, values: list[Any]) -> None:
    """The text a prepared statement runs as (and is logged as) is the statement that
    ran: parsing it gives the tree the parameters were bound into. A ``?`` inside a
    string, an identifier or a comment is no parameter. (One difference is kept on
    purpose: a select item's name stays as written, ``b + ?``, as MySQL names it.)
    """
    import attrs

    from rpl.core.execution.prepared import PreparedStatement
    from rpl.core.sql import ast, shapes
    from rpl.core.sql.lexer import K_OP, tokenize
    from rpl.core.sql.parser import parse, parse_text

    tree = parse_text(template)
    markers = tuple(t[3] for t in tokenize(template) if t[0] is K_OP and t[1] == "?")
    assert len(markers) == 3
    statement = PreparedStatement(1, None, template, tree, shapes.builder(tree), markers, (), [])
    bound, text = statement.bind(values)
    if isinstance(bound, ast.Select):
        assert bound.items[1].text == "b + ?"
        reparsed = parse_text(text)
        assert isinstance(reparsed, ast.Select)
        bound = attrs.evolve(
            bound,
            items=reparsed.items[:1] + (attrs.evolve(bound.items[1], text=reparsed.items[1].text),),
        )
    assert parse_text(text) == bound
    assert parse(text) == bound
    # bound by its text (the fallback for a tree the builders cannot rebuild): the same
    by_text = PreparedStatement(1, None, template, tree, None, markers, (), [], by_text=True)
    assert by_text.bind(values) == (bound, text)


# ------------------------------------------------------------- libmariadb (C)
class MysqlField(ctypes.Structure):
    """MYSQL_FIELD of MariaDB Connector/C 3 (mysql.h)."""

    _fields_ = [
        *[(name, ctypes.c_char_p) for name in ("name", "org_name", "table", "org_table", "db")],
        ("catalog", ctypes.c_char_p),
        ("def_", ctypes.c_char_p),
        ("length", ctypes.c_ulong),
        ("max_length", ctypes.c_ulong),
        *[
            (name, ctypes.c_uint)
            for name in (
                "name_length",
                "org_name_length",
                "table_length",
                "org_table_length",
                "db_length",
                "catalog_length",
                "def_length",
                "flags",
                "decimals",
                "charsetnr",
                "type",
            )
        ],
        ("extension", ctypes.c_void_p),
    ]


def libmariadb() -> Any:
    path = ctypes.util.find_library("mariadb")
    assert path, "libmariadb is not installed (sysbench depends on it)"
    lib = ctypes.CDLL(path)
    pointer, text, uint = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint
    for name, restype, argtypes in (
        ("mysql_init", pointer, [pointer]),
        (
            "mysql_real_connect",
            pointer,
            [pointer, text, text, text, text, uint, text, ctypes.c_ulong],
        ),
        ("mysql_close", None, [pointer]),
        ("mysql_stmt_init", pointer, [pointer]),
        ("mysql_stmt_prepare", ctypes.c_int, [pointer, text, ctypes.c_ulong]),
        ("mysql_stmt_param_count", ctypes.c_ulong, [pointer]),
        ("mysql_stmt_field_count", uint, [pointer]),
        ("mysql_stmt_result_metadata", pointer, [pointer]),
        ("mysql_num_fields", uint, [pointer]),
        ("mysql_fetch_field_direct", ctypes.POINTER(MysqlField), [pointer, uint]),
        ("mysql_free_result", None, [pointer]),
        ("mysql_stmt_execute", ctypes.c_int, [pointer]),
        ("mysql_stmt_store_result", ctypes.c_int, [pointer]),
        ("mysql_stmt_num_rows", ctypes.c_ulonglong, [pointer]),
        ("mysql_stmt_errno", uint, [pointer]),
        ("mysql_stmt_error", text, [pointer]),
        ("mysql_stmt_close", ctypes.c_char, [pointer]),
        ("mysql_error", text, [pointer]),
    ):
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


def test_libmariadb_prepares_with_result_metadata(server: ServerProcess) -> None:
    """libmariadb's C API: mysql_stmt_result_metadata after mysql_stmt_prepare names the
    columns with their types and flags, as the execution's result set has them; an
    unknown table fails the prepare with 1146.
    """
    server.query("CREATE DATABASE lm")
    server.query("CREATE TABLE lm.t (id INT PRIMARY KEY, v VARCHAR(10), big BIGINT UNSIGNED)")
    server.query("INSERT INTO lm.t VALUES (1, 'a', 5), (2, 'b', 18446744073709551615)")
    lib = libmariadb()
    handle = lib.mysql_init(None)
    assert lib.mysql_real_connect(
        handle, b"127.0.0.1", b"root", b"", b"lm", server.port, None, 0
    ), lib.mysql_error(handle)
    try:
        stmt = lib.mysql_stmt_init(handle)
        sql = b"SELECT id, v, big FROM t WHERE id > ?"
        assert lib.mysql_stmt_prepare(stmt, sql, len(sql)) == 0, lib.mysql_stmt_error(stmt)
        assert lib.mysql_stmt_param_count(stmt) == 1
        assert lib.mysql_stmt_field_count(stmt) == 3
        metadata = lib.mysql_stmt_result_metadata(stmt)
        assert metadata
        assert lib.mysql_num_fields(metadata) == 3
        fields = [lib.mysql_fetch_field_direct(metadata, i).contents for i in range(3)]
        assert [(f.name, f.table, f.db, f.type) for f in fields] == [
            (b"id", b"t", b"lm", 3),  # MYSQL_TYPE_LONG
            (b"v", b"t", b"lm", 253),  # MYSQL_TYPE_VAR_STRING
            (b"big", b"t", b"lm", 8),  # MYSQL_TYPE_LONGLONG
        ]
        assert fields[2].flags & 0x20  # UNSIGNED_FLAG
        assert fields[0].flags & 0x2  # PRI_KEY_FLAG
        lib.mysql_free_result(metadata)
        assert lib.mysql_stmt_close(stmt) == b"\x00"
        stmt = lib.mysql_stmt_init(handle)
        sql = b"SELECT id FROM t ORDER BY id"
        assert lib.mysql_stmt_prepare(stmt, sql, len(sql)) == 0, lib.mysql_stmt_error(stmt)
        assert lib.mysql_stmt_execute(stmt) == 0, lib.mysql_stmt_error(stmt)
        assert lib.mysql_stmt_store_result(stmt) == 0, lib.mysql_stmt_error(stmt)
        assert lib.mysql_stmt_num_rows(stmt) == 2
        lib.mysql_stmt_close(stmt)
        stmt = lib.mysql_stmt_init(handle)
        sql = b"SELECT * FROM nosuch"
        assert lib.mysql_stmt_prepare(stmt, sql, len(sql)) != 0
        assert lib.mysql_stmt_errno(stmt) == 1146
        assert lib.mysql_stmt_error(stmt) == b"Table 'lm.nosuch' doesn't exist"
        lib.mysql_stmt_close(stmt)
    finally:
        lib.mysql_close(handle)
