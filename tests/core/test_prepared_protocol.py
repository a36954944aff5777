"""COM_STMT_* byte by byte: a raw client after a PyMySQL login sends well-formed and
malformed prepared-statement packets to a real server and reads the replies.

Malformed input (an unknown statement id, a short parameter block, an unknown type, a
length past the payload, no types on the first execution) gets MySQL's error, nothing of
the statement runs, and the connection and the server keep serving.
"""

from __future__ import annotations

import datetime
import struct
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpl.core.testing.process import ServerProcess

COM_PING = 0x0E
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
COM_STMT_SEND_LONG_DATA = 0x18
COM_STMT_CLOSE = 0x19
COM_STMT_RESET = 0x1A
COM_STMT_FETCH = 0x1C
T_LONG, T_LONGLONG, T_TIME, T_BLOB, T_VAR_STRING = 0x03, 0x08, 0x0B, 0xFC, 0xFD


class RawClient:
    """Packets over the socket of a logged-in PyMySQL connection."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.connection = server.connect(database="ps")
        self.sock = self.connection._sock

    def close(self) -> None:
        self.connection.close()

    def send(self, payload: bytes) -> None:
        self.sock.sendall(len(payload).to_bytes(3, "little") + b"\x00" + payload)

    def _exact(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            assert chunk, "the server closed the connection"
            data += chunk
        return data

    def read(self) -> bytes:
        header = self._exact(4)
        return self._exact(int.from_bytes(header[:3], "little"))

    def command(self, payload: bytes) -> bytes:
        self.send(payload)
        return self.read()

    def prepare(self, sql: str) -> tuple[int, int, int]:
        """(statement id, columns, parameters); the definitions are read and dropped."""
        reply = self.command(bytes([COM_STMT_PREPARE]) + sql.encode())
        assert reply[0] == 0, error_of(reply)
        statement_id, columns, params = struct.unpack("<IHH", reply[1:9])
        for count in (params, columns):
            if count:
                for _ in range(count):
                    self.read()
                assert self.read()[0] == 0xFE
        return statement_id, columns, params

    def execute(self, statement_id: int, block: bytes = b"") -> bytes | list[bytes]:
        """The OK or ERR payload, or a result set's rows (payloads)."""
        first = self.command(
            bytes([COM_STMT_EXECUTE]) + struct.pack("<IBI", statement_id, 0, 1) + block
        )
        if first[0] in (0x00, 0xFF):
            return first
        for _ in range(first[0]):
            self.read()
        assert self.read()[0] == 0xFE
        rows: list[bytes] = []
        while True:
            row = self.read()
            if row[0] == 0xFE and len(row) < 9:
                return rows
            rows.append(row)

    def ping(self) -> None:
        assert self.command(bytes([COM_PING]))[0] == 0


def RawClient_for(client: RawClient) -> RawClient:  # noqa: N802
    """Another raw connection to ``client``'s server."""
    return RawClient(client.server)


def error_of(payload: bytes | list[bytes]) -> tuple[int, str, str]:
    assert isinstance(payload, bytes) and payload[0] == 0xFF, payload
    return struct.unpack("<H", payload[1:3])[0], payload[4:9].decode(), payload[9:].decode()


def lenenc(data: bytes) -> bytes:
    assert len(data) < 251
    return bytes([len(data)]) + data


def block(types: list[tuple[int, int]] | None, values: bytes, nulls: bytes = b"\x00") -> bytes:
    """A parameter block: NULL bitmap, new-params-bound flag, types, values."""
    if types is None:
        return nulls + b"\x00" + values
    return nulls + b"\x01" + b"".join(bytes(t) for t in types) + values


@pytest.fixture(scope="module")
def ps_server(server: ServerProcess) -> ServerProcess:
    server.query("CREATE DATABASE ps")
    server.query(
        "CREATE TABLE ps.t (id INT PRIMARY KEY, v VARCHAR(20), b BLOB, tm TIME(6), "
        "big BIGINT UNSIGNED)"
    )
    return server


@pytest.fixture
def raw(ps_server: ServerProcess) -> Any:
    client = RawClient(ps_server)
    yield client
    client.close()


def rows_of(server: ServerProcess) -> list[tuple[Any, ...]]:
    return server.query("SELECT id, v, b, tm, big FROM ps.t ORDER BY id")


def test_insert_and_select_in_binary_form(raw: RawClient, ps_server: ServerProcess) -> None:
    statement_id, columns, params = raw.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
    assert (columns, params) == (0, 5)
    time_bytes = struct.pack("<BBIBBBI", 12, 1, 1, 2, 3, 4, 5)  # -26:03:04.000005
    types = [(T_LONG, 0), (T_VAR_STRING, 0), (T_BLOB, 0), (T_TIME, 0), (T_LONGLONG, 0x80)]
    values = (
        struct.pack("<i", 10)
        + lenenc("héllo".encode())
        + lenenc(b"\x00\xff\x00")
        + time_bytes
        + struct.pack("<Q", 2**64 - 1)
    )
    ok = raw.execute(statement_id, block(types, values))
    assert isinstance(ok, bytes) and ok[:2] == b"\x00\x01"  # one row affected
    # types remembered: the second execution sends none; v is NULL (bit 1)
    values = struct.pack("<i", 11) + lenenc(b"") + b"\x00" + struct.pack("<Q", 0)
    ok = raw.execute(statement_id, block(None, values, nulls=b"\x02"))
    assert isinstance(ok, bytes) and ok[0] == 0, error_of(ok)
    assert rows_of(ps_server)[-2:] == [
        (10, "héllo", b"\x00\xff\x00", "-26:03:04.000005", 2**64 - 1),
        (11, None, b"", "00:00:00.000000", 0),
    ]
    select_id, columns, params = raw.prepare("SELECT id, v, b, tm, big FROM t WHERE id = ?")
    assert (columns, params) == (5, 1)
    rows = raw.execute(select_id, block([(T_LONG, 0)], struct.pack("<i", 10)))
    # header, NULL bitmap (5 columns + 2 bits: one byte, none NULL), then each cell
    assert rows == [
        b"\x00\x00"
        + struct.pack("<i", 10)
        + lenenc("héllo".encode())
        + lenenc(b"\x00\xff\x00")
        + lenenc(b"-26:03:04.000005")
        + struct.pack("<Q", 2**64 - 1)
    ]
    rows = raw.execute(select_id, block(None, struct.pack("<i", 11)))
    assert rows == [
        b"\x00\x08" + struct.pack("<i", 11) + lenenc(b"") + lenenc(b"00:00:00.000000") + bytes(8)
    ]


def test_long_data_is_the_parameter(raw: RawClient, ps_server: ServerProcess) -> None:
    statement_id, _, _ = raw.prepare("INSERT INTO t (id, b) VALUES (?, ?)")
    for chunk in (b"\x00" * 40000, b"tail\xff"):
        raw.send(bytes([COM_STMT_SEND_LONG_DATA]) + struct.pack("<IH", statement_id, 1) + chunk)
    types = [(T_LONG, 0), (T_BLOB, 0)]
    ok = raw.execute(statement_id, block(types, struct.pack("<i", 20)))
    assert isinstance(ok, bytes) and ok[0] == 0, error_of(ok)
    assert ps_server.query("SELECT b FROM ps.t WHERE id = 20") == [(b"\x00" * 40000 + b"tail\xff",)]
    # the long data was used up: the next execution reads the value from the block
    ok = raw.execute(statement_id, block(types, struct.pack("<i", 21) + lenenc(b"x")))
    assert isinstance(ok, bytes) and ok[0] == 0, error_of(ok)
    assert ps_server.query("SELECT b FROM ps.t WHERE id = 21") == [(b"x",)]


UNKNOWN_EXECUTE = (
    1243,
    "HY000",
    "Unknown prepared statement handler (999) given to mysqld_stmt_execute",
)
WRONG_EXECUTE = (1210, "HY000", "Incorrect arguments to mysqld_stmt_execute")


@pytest.mark.parametrize(
    ("name", "tail", "expected"),
    [
        ("no block at all", b"", WRONG_EXECUTE),
        ("short NULL bitmap", b"", WRONG_EXECUTE),
        ("types never sent", block(None, struct.pack("<i", 1) + lenenc(b"a")), WRONG_EXECUTE),
        ("type list cut", b"\x00\x01\x03\x00", WRONG_EXECUTE),
        ("unknown type byte", block([(0x20, 0), (T_VAR_STRING, 0)], b"\x00" * 8), WRONG_EXECUTE),
        (
            "value cut",
            block([(T_LONG, 0), (T_VAR_STRING, 0)], struct.pack("<i", 1) + b"\x05ab"),
            WRONG_EXECUTE,
        ),
        (
            "huge length",
            block(
                [(T_LONG, 0), (T_VAR_STRING, 0)],
                struct.pack("<i", 1) + b"\xfe" + struct.pack("<Q", 2**62),
            ),
            WRONG_EXECUTE,
        ),
        (
            "bad lenenc prefix",
            block([(T_LONG, 0), (T_VAR_STRING, 0)], b"\x01\0\0\0\xff"),
            WRONG_EXECUTE,
        ),
        ("int cut", block([(T_LONG, 0), (T_VAR_STRING, 0)], b"\x01\x00"), WRONG_EXECUTE),
    ],
)
def test_malformed_execute_is_refused(
    raw: RawClient, ps_server: ServerProcess, name: str, tail: bytes, expected: tuple[Any, ...]
) -> None:
    before = rows_of(ps_server)
    statement_id, _, _ = raw.prepare("INSERT INTO t (id, v) VALUES (?, ?)")
    payload = bytes([COM_STMT_EXECUTE]) + struct.pack("<I", statement_id)
    if name != "no block at all":
        payload += struct.pack("<BI", 0, 1) + tail
    reply = raw.command(payload)
    assert error_of(reply) == expected
    raw.ping()
    assert rows_of(ps_server) == before  # nothing half-applied
    # the statement is still there and works
    ok = raw.execute(
        statement_id,
        block([(T_LONG, 0), (T_VAR_STRING, 0)], struct.pack("<i", 900) + lenenc(b"ok")),
    )
    assert isinstance(ok, bytes) and ok[0] == 0, error_of(ok)
    assert ps_server.query("SELECT v FROM ps.t WHERE id = 900") == [("ok",)]
    ps_server.query("DELETE FROM ps.t WHERE id = 900")


def test_unknown_statement_ids(raw: RawClient) -> None:
    assert error_of(raw.command(bytes([COM_STMT_EXECUTE]) + struct.pack("<IBI", 999, 0, 1))) == (
        UNKNOWN_EXECUTE
    )
    assert error_of(raw.command(bytes([COM_STMT_RESET]) + struct.pack("<I", 999))) == (
        1243,
        "HY000",
        "Unknown prepared statement handler (999) given to mysqld_stmt_reset",
    )
    assert error_of(raw.command(bytes([COM_STMT_FETCH]) + struct.pack("<II", 999, 1))) == (
        1243,
        "HY000",
        "Unknown prepared statement handler (999) given to mysqld_stmt_fetch",
    )
    # ids belong to their connection
    other = RawClient_for(raw)
    statement_id, _, _ = other.prepare("SELECT 1")
    reply = raw.command(bytes([COM_STMT_EXECUTE]) + struct.pack("<IBI", statement_id, 0, 1))
    assert error_of(reply)[:2] == (1243, "HY000")
    assert other.execute(statement_id) == [b"\x00\x00" + struct.pack("<q", 1)]  # BIGINT
    other.close()
    # CLOSE and SEND_LONG_DATA never reply, even to an unknown id or a short packet
    raw.send(bytes([COM_STMT_CLOSE]) + struct.pack("<I", 999))
    raw.send(bytes([COM_STMT_CLOSE]))
    raw.send(bytes([COM_STMT_SEND_LONG_DATA]) + struct.pack("<IH", 999, 0) + b"x")
    raw.send(bytes([COM_STMT_SEND_LONG_DATA, 1]))
    raw.ping()


def test_fetch_without_cursor_reset_and_close(raw: RawClient) -> None:
    statement_id, _, _ = raw.prepare("SELECT v FROM t WHERE id = ?")
    assert error_of(raw.command(bytes([COM_STMT_FETCH]) + struct.pack("<II", statement_id, 1))) == (
        1421,
        "HY000",
        f"The statement ({statement_id}) has no open cursor.",
    )
    # SEND_LONG_DATA to a parameter the statement lacks: the next execution reports it
    raw.send(bytes([COM_STMT_SEND_LONG_DATA]) + struct.pack("<IH", statement_id, 5) + b"x")
    reply = raw.execute(statement_id, block([(T_LONG, 0)], struct.pack("<i", 1)))
    assert isinstance(reply, bytes)
    assert error_of(reply) == (1210, "HY000", "Incorrect arguments to mysqld_stmt_send_long_data")
    raw.send(bytes([COM_STMT_SEND_LONG_DATA]) + struct.pack("<IH", statement_id, 5) + b"x")
    assert raw.command(bytes([COM_STMT_RESET]) + struct.pack("<I", statement_id))[0] == 0
    assert raw.execute(statement_id, block([(T_LONG, 0)], struct.pack("<i", -5))) == []
    raw.send(bytes([COM_STMT_CLOSE]) + struct.pack("<I", statement_id))
    reply = raw.execute(statement_id, block([(T_LONG, 0)], struct.pack("<i", 1)))
    assert isinstance(reply, bytes)
    assert error_of(reply)[0] == 1243


def test_prepare_errors(raw: RawClient) -> None:
    code, state, message = error_of(raw.command(bytes([COM_STMT_PREPARE]) + b"SELEC 1"))
    assert (code, state) == (1064, "42000")
    assert message.startswith("You have an error in your SQL syntax") and "'SELEC 1'" in message
    assert error_of(raw.command(bytes([COM_STMT_PREPARE]) + b"SELECT * FROM nosuch")) == (
        1146,
        "42S02",
        "Table 'ps.nosuch' doesn't exist",
    )
    assert error_of(raw.command(bytes([COM_STMT_PREPARE]) + b"PREPARE s FROM 'SELECT 1'")) == (
        1295,
        "HY000",
        "This command is not supported in the prepared statement protocol yet",
    )
    assert error_of(raw.command(bytes([COM_STMT_PREPARE]) + b"\xff\xfe"))[0] == 1064
    raw.ping()


# --------------------------------------------------- binary rows, type by type
def _column(code: int, unsigned: bool = False, charset: int = 255) -> Any:
    from rpl.core.net.responses import UNSIGNED_FLAG, Column

    return Column("c", code, 10, charset, UNSIGNED_FLAG if unsigned else 0, 0)


CELLS = [
    # (type code, unsigned, stored value, the cell's bytes as MySQL's binary protocol has them)
    (0x01, False, -128, b"\x80"),
    (0x01, True, 255, b"\xff"),
    (0x02, False, -2, struct.pack("<h", -2)),
    (0x02, True, 65535, b"\xff\xff"),
    (0x09, False, -8388608, struct.pack("<i", -8388608)),
    (0x03, True, 4294967295, b"\xff\xff\xff\xff"),
    (0x08, False, -(2**63), struct.pack("<q", -(2**63))),
    (0x08, True, 2**64 - 1, b"\xff" * 8),
    (0x0D, True, 2024, struct.pack("<H", 2024)),  # YEAR: 2 bytes
    (0x04, False, 1.5, struct.pack("<f", 1.5)),
    (0x05, False, -2.25e-300, struct.pack("<d", -2.25e-300)),
    (0xF6, False, Decimal("-12.340"), b"\x07-12.340"),
    (0x0A, False, "2024-02-29", b"\x04" + struct.pack("<HBB", 2024, 2, 29)),
    (0x0A, False, "0000-00-00", b"\x00"),
    (0x0C, False, "2024-01-02 03:04:05", b"\x07" + struct.pack("<HBBBBB", 2024, 1, 2, 3, 4, 5)),
    (
        0x0C,
        False,
        "2024-01-02 03:04:05.000678",
        b"\x0b" + struct.pack("<HBBBBBI", 2024, 1, 2, 3, 4, 5, 678),
    ),
    (0x07, False, "1970-01-01 00:00:01", b"\x07" + struct.pack("<HBBBBB", 1970, 1, 1, 0, 0, 1)),
    (0x0C, False, "2024-01-02 00:00:00", b"\x04" + struct.pack("<HBB", 2024, 1, 2)),
    (0x0B, False, "00:00:00", b"\x00"),
    (0x0B, False, "10:20:30", b"\x08" + struct.pack("<BIBBB", 0, 0, 10, 20, 30)),
    (0x0B, False, "-26:03:04.000005", b"\x0c" + struct.pack("<BIBBBI", 1, 1, 2, 3, 4, 5)),
    (0x0B, False, "-838:59:59", b"\x08" + struct.pack("<BIBBB", 1, 34, 22, 59, 59)),
    (0xFD, False, "héllo", b"\x06" + "héllo".encode()),
    (0xFE, False, "a", b"\x01a"),  # ENUM/SET are STRING columns
    (0xF5, False, '{"a": 1}', b"\x08" + b'{"a": 1}'),
    (0xFC, False, b"\x00\xff", b"\x02\x00\xff"),
]


@pytest.mark.parametrize(("code", "unsigned", "value", "cell"), CELLS)
def test_binary_cell(code: int, unsigned: bool, value: Any, cell: bytes) -> None:
    from rpl.core.net.binary import binary_row

    columns = [_column(0x03), _column(code, unsigned)]
    assert binary_row(columns, [None, value]) == b"\x00\x04" + cell  # column 0 NULL: bit 2
    assert binary_row(columns, [7, value]) == b"\x00\x00" + struct.pack("<i", 7) + cell


def test_binary_rows_read_by_mysql_connector() -> None:
    """mysql-connector-python's own binary row parser reads the rows back."""
    from mysql.connector.protocol import MySQLProtocol

    from rpl.core.net.binary import binary_row

    readable = [c for c in CELLS if c[0] not in (0x0D, 0x0B)]  # its YEAR/TIME differ
    columns = [_column(code, unsigned) for code, unsigned, _, _ in readable]
    fields = [
        ("c", column.type_code, None, None, None, None, 1, column.flags, column.charset)
        for column in columns
    ]
    values = [value for _, _, value, _ in readable]
    for nulls in (False, True):
        row = [None if nulls and i % 3 == 0 else v for i, v in enumerate(values)]
        got = MySQLProtocol()._parse_binary_values(fields, binary_row(columns, row)[1:])  # noqa: SLF001
        want = []
        for (code, _, _, _), value in zip(readable, row, strict=True):
            if value is None or code not in (0x0A, 0x0C, 0x07):
                want.append(value)
            elif value == "0000-00-00":
                want.append(None)
            elif code == 0x0A:
                want.append(datetime.date.fromisoformat(str(value)))
            else:
                want.append(datetime.datetime.fromisoformat(str(value)))
        assert list(got) == [
            w.encode() if isinstance(w, str) and c.charset == 63 else w
            for w, c in zip(want, columns, strict=True)
        ]


PARAMETERS = [
    # (type code, unsigned flag byte, the value's bytes, the value bound)
    (0x01, 0x00, b"\xff", -1),
    (0x01, 0x80, b"\xff", 255),
    (0x02, 0x00, struct.pack("<h", -300), -300),
    (0x02, 0x80, b"\xff\xff", 65535),
    (0x0D, 0x00, struct.pack("<h", 2024), 2024),
    (0x09, 0x00, struct.pack("<i", -5), -5),
    (0x03, 0x80, b"\xff\xff\xff\xff", 4294967295),
    (0x08, 0x00, struct.pack("<q", -(2**63)), -(2**63)),
    (0x08, 0x80, b"\xff" * 8, 2**64 - 1),
    (0x04, 0x00, struct.pack("<f", -0.5), -0.5),
    (0x05, 0x00, struct.pack("<d", 1e300), 1e300),
    (0x00, 0x00, b"\x05-1.25", Decimal("-1.25")),
    (0xF6, 0x00, b"\x0512.50", Decimal("12.50")),
    (0x0A, 0x00, b"\x04" + struct.pack("<HBB", 2024, 2, 29), "2024-02-29"),
    (0x0A, 0x00, b"\x00", "0000-00-00"),
    (0x0C, 0x00, b"\x04" + struct.pack("<HBB", 2024, 2, 29), "2024-02-29 00:00:00"),
    (0x0C, 0x00, b"\x07" + struct.pack("<HBBBBB", 2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05"),
    (
        0x07,
        0x00,
        b"\x0b" + struct.pack("<HBBBBBI", 2024, 1, 2, 3, 4, 5, 600),
        "2024-01-02 03:04:05.000600",
    ),
    (0x0B, 0x00, b"\x00", "00:00:00"),
    (0x0B, 0x00, b"\x08" + struct.pack("<BIBBB", 1, 2, 3, 4, 5), "-51:04:05"),
    (0x0B, 0x00, b"\x0c" + struct.pack("<BIBBBI", 0, 0, 1, 2, 3, 999999), "01:02:03.999999"),
    (0xFD, 0x00, lenenc("😀".encode()), "😀"),
    (0xFE, 0x00, lenenc(b"\xff\xfe"), b"\xff\xfe"),  # not UTF-8: bytes
    (0x0F, 0x00, lenenc(b""), ""),
    (0xF7, 0x00, lenenc(b"b"), "b"),
    (0xF8, 0x00, lenenc(b"x,y"), "x,y"),
    (0xF5, 0x00, lenenc(b"[1]"), "[1]"),
    (0xFC, 0x00, lenenc(b"abc"), b"abc"),  # BLOB: bytes, even when UTF-8
    (0xFB, 0x00, lenenc(b"\x00"), b"\x00"),
    (0x10, 0x00, lenenc(b"\x05"), b"\x05"),
    (0x06, 0x00, b"", None),
]


PARAMETER_CODES = sorted({code for code, _, _, _ in PARAMETERS})


@pytest.mark.parametrize(("code", "flags", "data", "value"), PARAMETERS)
def test_parameter_decoding(code: int, flags: int, data: bytes, value: Any) -> None:
    from rpl.core.net.binary import read_parameters
    from rpl.core.net.packets import PayloadReader

    block_ = b"\x00\x01" + bytes([code, flags, 0x03, 0x00]) + data + struct.pack("<i", 9)
    values, types = read_parameters(PayloadReader(block_), 2, None, {})
    assert values == [value, 9]
    assert type(values[0]) is type(value)
    assert types == ((code, flags == 0x80), (0x03, False))
    # the same types, not sent again; the first parameter NULL by its bit
    values, _ = read_parameters(PayloadReader(b"\x01\x00" + struct.pack("<i", 8)), 2, types, {})
    assert values == [None, 8]


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x01\x0a\x00\x05" + b"\x00" * 5,  # a DATE of 5 bytes
        b"\x00\x01\x0b\x00\x09" + b"\x00" * 9,  # a TIME of 9 bytes
        b"\x00\x01\xf6\x00\x03abc",  # a DECIMAL that is not a number
        b"\x00\x01\x20\x00" + b"\x00" * 8,  # an unknown type byte
    ],
)
def test_parameter_refused(data: bytes) -> None:
    from rpl.core.net.binary import ParameterError, read_parameters
    from rpl.core.net.packets import PayloadReader

    with pytest.raises(ParameterError) as refused:
        read_parameters(PayloadReader(data), 1, None, {})
    assert "too short" not in str(refused.value)  # refused for what it holds, not its length


def test_long_data_beyond_max_allowed_packet(raw: RawClient, ps_server: ServerProcess) -> None:
    """Long data is bounded by max_allowed_packet, as in MySQL: past it the data is
    dropped and the execution gets MySQL's 1105; the statement stays usable.
    """
    statement_id, _, _ = raw.prepare("INSERT INTO t (id, b) VALUES (?, ?)")
    ps_server.query("SET GLOBAL max_allowed_packet = 1024")
    try:
        for _ in range(2):
            chunk = b"\x01" * 600
            raw.send(bytes([COM_STMT_SEND_LONG_DATA]) + struct.pack("<IH", statement_id, 1) + chunk)
        reply = raw.execute(statement_id, block([(T_LONG, 0), (T_BLOB, 0)], struct.pack("<i", 30)))
        assert isinstance(reply, bytes)
        assert error_of(reply) == (
            1105,
            "HY000",
            "Parameter of prepared statement which is set through mysql_send_long_data() "
            "is longer than 'max_allowed_packet' bytes",
        )
    finally:
        ps_server.query("SET GLOBAL max_allowed_packet = 67108864")
    assert ps_server.query("SELECT id FROM ps.t WHERE id = 30") == []
    ok = raw.execute(
        statement_id, block([(T_LONG, 0), (T_BLOB, 0)], struct.pack("<i", 30) + lenenc(b"y"))
    )
    assert isinstance(ok, bytes) and ok[0] == 0, error_of(ok)
    assert ps_server.query("SELECT b FROM ps.t WHERE id = 30") == [(b"y",)]


@given(
    st.binary(max_size=64),
    st.integers(min_value=0, max_value=6),
    st.booleans(),
)
def test_any_parameter_block_is_read_or_refused(data: bytes, count: int, typed: bool) -> None:
    """Whatever the bytes, reading a parameter block gives values (one per parameter) or
    ParameterError: never another exception, which would be a server bug.
    """
    from rpl.core.net.binary import ParameterError, read_parameters
    from rpl.core.net.packets import PayloadReader

    previous = ((0x03, False),) * count if typed else None
    try:
        values, types = read_parameters(PayloadReader(data), count, previous, {})
    except ParameterError:
        return
    assert len(values) == len(types) == count


@given(
    st.lists(
        st.tuples(st.sampled_from([*PARAMETER_CODES, 0x20, 0x11]), st.sampled_from([0, 0x80])),
        min_size=1,
        max_size=5,
    ),
    st.binary(max_size=1),
    st.binary(max_size=48),
)
def test_typed_parameter_blocks_are_read_or_refused(
    types: list[tuple[int, int]], nulls: bytes, tail: bytes
) -> None:
    """Blocks with types sent (known ones, an unknown one) and any value bytes."""
    from rpl.core.net.binary import ParameterError, read_parameters
    from rpl.core.net.packets import PayloadReader

    data = nulls.ljust(1, b"\x00") + b"\x01" + b"".join(bytes(t) for t in types) + tail
    try:
        values, got = read_parameters(PayloadReader(data), len(types), None, {})
    except ParameterError:
        return
    assert len(values) == len(got) == len(types)
    assert [code for code, _ in got] == [code for code, _ in types]
