"""The relay log's published end: what the applier may read moves only when the
receiver publishes (at transaction boundaries), never past a whole event."""

from __future__ import annotations

from pathlib import Path

from rpl.core.binlog.events import QueryEvent, encode_event
from rpl.core.binlog.gtid import GtidSet
from rpl.core.replication.relaylog import RelayLog


def relay_log(directory: Path) -> RelayLog:
    log = RelayLog(directory, "relay-bin", 2, True, sync_every=lambda: 0,
                   max_size=lambda: 1 << 30)
    log.open_new(GtidSet())
    return log


def event(text: str) -> bytes:
    return encode_event(QueryEvent(thread_id=1, exec_time=0, error_code=0, status_vars=b"",
                                   db="d", query=text), server_id=1, timestamp=0)


def test_an_unpublished_append_is_not_readable_until_published(tmp_path: Path) -> None:
    log = relay_log(tmp_path)
    start = log.end
    log.append(event("BEGIN"), publish=False)
    log.append(event("INSERT INTO t VALUES (1)"), publish=False)
    assert log.end == start, "the applier must not see a transaction's first events alone"
    log.publish()
    size = (tmp_path / start.file).stat().st_size
    assert log.end.file == start.file and log.end.pos == size > start.pos


def test_a_publishing_append_moves_the_end_past_everything_before_it(tmp_path: Path) -> None:
    log = relay_log(tmp_path)
    log.append(event("BEGIN"), publish=False)
    log.append(event("COMMIT"))
    assert log.end.pos == (tmp_path / log.end.file).stat().st_size


def test_closing_publishes_what_was_appended(tmp_path: Path) -> None:
    log = relay_log(tmp_path)
    log.append(event("BEGIN"), publish=False)
    log.close()
    assert log.end.pos == (tmp_path / log.end.file).stat().st_size
