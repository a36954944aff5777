"""SHOW BINLOG EVENTS on the rows events: Event_type and Info as MySQL 8.0 prints them
(``Log_event::get_type_str`` and each event's ``pack_info`` in sql/log_event.cc), on
events built with the codec and read back from a binlog file as the statement reads
them."""

from __future__ import annotations

import uuid
from pathlib import Path

from rpl.core.binlog import events as ev
from rpl.core.binlog.logfile import read_events
from rpl.core.engine.schema import ColumnSchema
from rpl.core.execution.admin import _EVENT_NAMES, event_info

TABLE = ev.TableMapEvent(
    108,
    "db1",
    "t1",
    (
        ev.binlog_column(ColumnSchema("id", "INT", nullable=False)),
        ev.binlog_column(ColumnSchema("v", "VARCHAR", 20)),
    ),
)


def _show(events: list[ev.Event], tmp_path: Path) -> list[tuple[str, str]]:
    """(Event_type, Info) of each event after the FORMAT_DESCRIPTION of a binlog file
    holding ``events``, read as SHOW BINLOG EVENTS reads a file."""
    data = bytearray(ev.BINLOG_MAGIC)
    for event in [ev.FormatDescriptionEvent(), *events]:
        at = len(data)
        data += ev.encode_event(event, server_id=1, timestamp=1_700_000_000)
        ev.set_log_pos(data, at, len(data), True)
    path = tmp_path / "binlog.000001"
    path.write_bytes(bytes(data))
    return [
        (_EVENT_NAMES.get(e.header.type_code, "?"), event_info(e.event))
        for e in list(read_events(path))[1:]
    ]


def test_a_row_transaction_as_show_binlog_events_prints_it(tmp_path: Path) -> None:
    sid = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
    status = ev.default_status_vars()
    shown = _show(
        [
            ev.GtidEvent(sid, 7),
            ev.QueryEvent(1, 0, 0, status, "db1", "BEGIN"),
            ev.RowsQueryEvent("INSERT INTO t1 VALUES (1, 'a'), (2, 'b')"),
            TABLE,
            ev.WriteRowsEvent.of(TABLE, [(1, "a")], flags=0),
            ev.WriteRowsEvent.of(TABLE, [(2, "b")]),
            TABLE,
            ev.UpdateRowsEvent.of_updates(TABLE, [((1, "a"), (1, "c"))]),
            TABLE,
            ev.DeleteRowsEvent.of(TABLE, [(2, "b")]),
            ev.XidEvent(31),
        ],
        tmp_path,
    )
    assert shown == [
        ("Gtid", f"SET @@SESSION.GTID_NEXT= '{sid}:7'"),
        ("Query", "use `db1`; BEGIN"),
        ("Rows_query", "# INSERT INTO t1 VALUES (1, 'a'), (2, 'b')"),
        ("Table_map", "table_id: 108 (db1.t1)"),
        ("Write_rows", "table_id: 108"),
        ("Write_rows", "table_id: 108 flags: STMT_END_F"),
        ("Table_map", "table_id: 108 (db1.t1)"),
        ("Update_rows", "table_id: 108 flags: STMT_END_F"),
        ("Table_map", "table_id: 108 (db1.t1)"),
        ("Delete_rows", "table_id: 108 flags: STMT_END_F"),
        ("Xid", "COMMIT /* xid=31 */"),
    ]


def test_only_stmt_end_f_is_named() -> None:
    """Rows_log_event::pack_info names STMT_END_F alone: the other flags print nothing."""
    flags = ev.NO_FOREIGN_KEY_CHECKS_F | ev.RELAXED_UNIQUE_CHECKS_F
    assert event_info(ev.WriteRowsEvent.of(TABLE, [(1, "a")], flags=flags)) == "table_id: 108"
    both = ev.DeleteRowsEvent.of(TABLE, [(1, "a")], flags=flags | ev.STMT_END_F)
    assert event_info(both) == "table_id: 108 flags: STMT_END_F"


def test_a_table_id_wider_than_32_bits() -> None:
    wide = ev.TableMapEvent(0x0102030405, "d", "t", TABLE.columns)
    assert event_info(wide) == f"table_id: {0x0102030405} (d.t)"
    assert event_info(ev.WriteRowsEvent.of(wide, [(1, None)])) == (
        f"table_id: {0x0102030405} flags: STMT_END_F"
    )


def test_event_type_names() -> None:
    assert {
        code: _EVENT_NAMES[code]
        for code in (
            ev.TABLE_MAP_EVENT,
            ev.WRITE_ROWS_EVENT,
            ev.UPDATE_ROWS_EVENT,
            ev.DELETE_ROWS_EVENT,
            ev.ROWS_QUERY_LOG_EVENT,
            ev.VIEW_CHANGE_EVENT,
        )
    } == {
        19: "Table_map",
        30: "Write_rows",
        31: "Update_rows",
        32: "Delete_rows",
        29: "Rows_query",
        37: "View_change",
    }


def test_view_change_info() -> None:
    event = ev.ViewChangeEvent("17000000:12", 0, ((b"gtid_extracted", b"g:1-4"),))
    assert event_info(event) == "view_id=17000000:12, seq_number=0"
