"""Group commit and the storage hooks, with observers registered on an in-process server.

The server runs in this process (real sockets, real files) so that a test observer
can block inside a hook and the test can see what holds at that moment.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymysql
import pymysql.cursors
import pytest

from rpl.core.binlog.events import WRITE_ROWS_EVENT
from rpl.core.delegates import FAILURES
from rpl.core.instance.server import Server, ServerConfig
from rpl.observers import hookimpl


@pytest.fixture
def live(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = Server(ServerConfig(datadir=tmp_path / "data", port=0))
    server.start()
    yield server
    server.shutdown()


def connect(server: Server, **kwargs: Any) -> pymysql.Connection[pymysql.cursors.Cursor]:
    return pymysql.connect(
        host="127.0.0.1", port=server.port, user="root", autocommit=True, **kwargs
    )


def setup_table(server: Server) -> None:
    with connect(server).cursor() as cursor:
        cursor.execute("CREATE DATABASE g")
        cursor.execute("CREATE TABLE g.t (id INT NOT NULL PRIMARY KEY, v INT)")


def queue_behind_gate(insert: Callable[[int], None], gate: threading.Event) -> None:
    """Run ``insert(1)`` .. ``insert(8)`` in 8 threads; open ``gate`` (which a test observer
    holds the first group at) once the others have had time to queue behind it."""
    threads = [threading.Thread(target=insert, args=(i,)) for i in range(1, 9)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    gate.set()
    for thread in threads:
        thread.join(10)


class Recorder:
    """Records the storage and transaction hooks in call order, with what it saw."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.calls: list[tuple[str, str, int]] = []
        self.committed_gtids: list[str | None] = []
        self.visible_at_sync: list[int] = []
        self.published_at_flush: list[int] = []

    @hookimpl
    def after_flush(self, param, log_file, log_pos):  # type: ignore[no-untyped-def]
        self.published_at_flush.append(self.server.binlog.end.pos)
        self.calls.append(("after_flush", log_file, log_pos))

    @hookimpl
    def after_sync(self, param, log_file, log_pos):  # type: ignore[no-untyped-def]
        table = self.server.engine.table("g", "t")
        self.visible_at_sync.append(len(table.rows))
        self.calls.append(("after_sync", log_file, log_pos))

    @hookimpl
    def after_commit(self, param):  # type: ignore[no-untyped-def]
        self.calls.append(("after_commit", param.log_file, param.log_pos))
        self.committed_gtids.append(param.gtid)


def test_hooks_in_order_with_positions(live: Server) -> None:
    setup_table(live)
    recorder = Recorder(live)
    live.delegates.registry.register(recorder, "recorder")
    with connect(live).cursor() as cursor:
        cursor.execute("INSERT INTO g.t VALUES (1, 1)")
    names = [c[0] for c in recorder.calls]
    assert names == ["after_flush", "after_sync", "after_commit"]
    flush, sync, commit = recorder.calls
    assert flush[1:] == sync[1:] == commit[1:]
    assert commit[2] == live.binlog.end.pos
    last = live.binlog.gtid_executed.last_gno(live.server_uuid)
    assert recorder.committed_gtids == [f"{live.server_uuid_text}:{last}"]
    assert recorder.visible_at_sync == [0], "rows visible before engine commit"
    assert recorder.published_at_flush[0] < flush[2], "end published before the sync stage"


def test_group_commit_groups_concurrent_sessions(live: Server) -> None:
    setup_table(live)
    gate = threading.Event()

    class SlowFlush:
        """Holds the first group in the flush stage (under the binlog write lock), so
        the sessions arriving meanwhile must queue and go as one group."""

        @hookimpl
        def after_flush(self, param, log_file, log_pos):  # type: ignore[no-untyped-def]
            gate.wait(5)

    live.delegates.registry.register(SlowFlush(), "slow")
    before = live.binlog.binlog_group_commits

    def insert(i: int) -> None:
        with connect(live).cursor() as cursor:
            cursor.execute(f"INSERT INTO g.t VALUES ({i}, {i})")

    queue_behind_gate(insert, gate)
    commits = live.binlog.binlog_commits
    groups = live.binlog.binlog_group_commits - before
    assert len(live.engine.table("g", "t").rows) == 8
    assert groups <= 3, f"{commits} commits in {groups} groups: no grouping"
    with connect(live).cursor() as cursor:
        cursor.execute("SHOW GLOBAL STATUS LIKE 'Binlog_%commits'")
        status = dict(cursor.fetchall())
    assert int(status["Binlog_group_commits"]) == live.binlog.binlog_group_commits


def test_a_failed_group_answers_every_member_with_its_error(live: Server) -> None:
    """The leader sends the replies of the sessions in its group (their threads do not
    wait): when the group fails in after_flush, each client gets the error, not an OK,
    on a connection that stays usable, and nothing was committed or left locked."""
    setup_table(live)
    gate, failing = threading.Event(), threading.Event()
    failing.set()
    flushes: list[int] = []

    class FailingFlush:
        @hookimpl
        def after_flush(self, param, log_file, log_pos):  # type: ignore[no-untyped-def]
            flushes.append(log_pos)
            gate.wait(5)  # the first group waits here while the others queue behind it
            if failing.is_set():
                raise RuntimeError("refused by the test observer")

    live.delegates.registry.register(FailingFlush(), "failing")
    outcomes: dict[int, object] = {}

    def insert(i: int) -> None:
        connection = connect(live)
        with connection.cursor() as cursor:
            try:
                cursor.execute(f"INSERT INTO g.t VALUES ({i}, {i})")
                outcomes[i] = "OK"
            except pymysql.MySQLError as exc:
                outcomes[i] = exc.args[0]
            cursor.execute("SELECT COUNT(*) FROM g.t")
            outcomes[-i] = cursor.fetchone()
        connection.close()

    queue_behind_gate(insert, gate)
    assert {outcomes[i] for i in range(1, 9)} == {3100}, outcomes
    assert all(outcomes[-i] == (0,) for i in range(1, 9)), outcomes
    assert len(flushes) <= 3, f"8 sessions in {len(flushes)} flushes: no group formed"
    failing.clear()
    with connect(live).cursor() as cursor:  # no row lock left behind by the failed groups
        cursor.execute("INSERT INTO g.t VALUES (1,1),(2,2),(3,3),(4,4),(5,5),(6,6),(7,7),(8,8)")
        cursor.execute("SELECT COUNT(*) FROM g.t")
        assert cursor.fetchone() == (8,)


def test_rotation_while_a_session_waits_in_after_sync(live: Server) -> None:
    """WL#6355's deadlock: a commit blocked in after_sync until a reader has read its
    events; FLUSH BINARY LOGS meanwhile. Neither may wait for the other."""
    setup_table(live)
    released = threading.Event()
    read_ok = threading.Event()
    flusher_done = threading.Event()

    class WaitForReader:
        @hookimpl
        def after_sync(self, param, log_file, log_pos):  # type: ignore[no-untyped-def]
            # Like semisync waiting for an ACK: here, until the rotation is done.
            flusher_done.wait(10)

    live.delegates.registry.register(WaitForReader(), "waiter")
    errors: list[BaseException] = []

    def commit() -> None:
        try:
            with connect(live).cursor() as cursor:
                cursor.execute("INSERT INTO g.t VALUES (100, 1)")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    committer = threading.Thread(target=commit)
    committer.start()
    deadline = time.monotonic() + 5
    while live.binlog.end.pos == live.binlog.committed_end.pos and time.monotonic() < deadline:
        time.sleep(0.01)

    def flush() -> None:
        with connect(live).cursor() as cursor:
            cursor.execute("FLUSH BINARY LOGS")
        flusher_done.set()

    threading.Thread(target=flush, daemon=True).start()

    def reader() -> None:
        # A dump thread reads the published end and the events before it, with no
        # binlog lock, while the rotation happens.
        end = live.binlog.end
        from rpl.core.binlog.logfile import read_events

        events = list(read_events(live.binlog.directory / end.file, stop_at=end.pos))
        if any(e.header.type_code == WRITE_ROWS_EVENT for e in events):
            read_ok.set()
        released.set()

    threading.Thread(target=reader, daemon=True).start()
    assert flusher_done.wait(5), "FLUSH BINARY LOGS waited for a session in after_sync"
    assert released.wait(5)
    committer.join(10)
    assert not committer.is_alive() and not errors
    assert read_ok.is_set(), "the reader did not see the waiting group's events"
    assert len(live.binlog.index.names()) == 2


def test_after_flush_failure_cuts_the_group_back(live: Server) -> None:
    setup_table(live)
    from rpl.observers import ObserverError

    class Refuse:
        @hookimpl
        def after_flush(self, param, log_file, log_pos):  # type: ignore[no-untyped-def]
            raise ObserverError("refused by test")

    end_before = live.binlog.end
    live.delegates.registry.register(Refuse(), "refuse")
    with pytest.raises(pymysql.err.MySQLError) as info:
        with connect(live).cursor() as cursor:
            cursor.execute("INSERT INTO g.t VALUES (7, 7)")
    assert info.value.args[0] == 3100 and "after_flush" in info.value.args[1]
    live.delegates.registry.unregister("refuse")
    assert live.binlog.end == end_before
    size = (live.binlog.directory / end_before.file).stat().st_size
    assert size == end_before.pos, "the failed group's bytes stayed in the binlog"
    with connect(live).cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM g.t")
        assert cursor.fetchone() == (0,)
        cursor.execute("INSERT INTO g.t VALUES (7, 7)")
        cursor.execute("SELECT COUNT(*) FROM g.t")
        assert cursor.fetchone() == (1,)


def test_groups_flushed_behind_a_waiting_commit_group_commit_as_one(live: Server) -> None:
    """MySQL's commit stage queue: while a commit group waits in after_sync (semisync
    waiting for its ACK), the groups flushed behind it queue for the commit stage and go
    through it together: one after_sync with the last group's end, their rows invisible
    until then, then the engine commits and after_commit in binlog order."""
    setup_table(live)
    gate = threading.Event()
    recorder = Recorder(live)

    class HoldFirstSync:
        @hookimpl
        def after_sync(self, param, log_file, log_pos):  # type: ignore[no-untyped-def]
            gate.wait(10)

    live.delegates.registry.register(recorder, "recorder")
    live.delegates.registry.register(HoldFirstSync(), "hold")
    threads = []
    for i in range(1, 6):  # one session at a time: each its own flush group
        threads.append(
            threading.Thread(
                target=lambda i=i: (
                    connect(live).cursor().execute(f"INSERT INTO g.t VALUES ({i}, {i})")
                )
            )
        )
        threads[-1].start()
        deadline = time.monotonic() + 5
        while [c[0] for c in recorder.calls].count(
            "after_flush"
        ) < i and time.monotonic() < deadline:
            time.sleep(0.005)
    time.sleep(0.2)
    flushes = [c for c in recorder.calls if c[0] == "after_flush"]
    assert len(flushes) == 5, "each session was not its own flush group"
    assert [c[0] for c in recorder.calls].count("after_sync") == 1
    assert recorder.visible_at_sync == [0]
    gate.set()
    for thread in threads:
        thread.join(10)
    syncs = [c for c in recorder.calls if c[0] == "after_sync"]
    commits = [c for c in recorder.calls if c[0] == "after_commit"]
    assert syncs == [("after_sync", *flushes[0][1:]), ("after_sync", *flushes[-1][1:])], (
        "the four groups queued behind the first did not go through one after_sync"
    )
    assert recorder.visible_at_sync == [0, 1], "rows of the queued groups seen before it"
    assert [c[1:] for c in commits] == [c[1:] for c in flushes], "not in binlog order"
    assert len(live.engine.table("g", "t").rows) == 5


def test_commit_stage_keeps_binlog_order_under_concurrency(live: Server) -> None:
    """Many sessions, an after_sync that takes a random while: after_commit runs once per
    transaction in binlog order, each after the after_sync that covers it, and each
    after_sync ends exactly where the commit group's last transaction ends."""
    setup_table(live)
    events: list[tuple[str, int]] = []
    pace = random.Random(11)

    class Jittery:
        @hookimpl
        def after_sync(self, param, log_file, log_pos):  # type: ignore[no-untyped-def]
            events.append(("sync", log_pos))
            time.sleep(pace.random() * 0.003)

        @hookimpl
        def after_commit(self, param):  # type: ignore[no-untyped-def]
            events.append(("commit", param.log_pos))

    live.delegates.registry.register(Jittery(), "jittery")

    def insert(base: int) -> None:
        with connect(live).cursor() as cursor:
            for i in range(base, base + 15):
                cursor.execute(f"INSERT INTO g.t VALUES ({i}, {i})")

    threads = [threading.Thread(target=insert, args=(100 * n,)) for n in range(1, 13)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    commits = [pos for kind, pos in events if kind == "commit"]
    assert len(commits) == 12 * 15 and commits == sorted(set(commits))
    covered = 0
    for index, (kind, pos) in enumerate(events):
        if kind == "sync":
            assert index == 0 or events[index - 1] == ("commit", covered)
            covered = pos
        else:
            assert pos <= covered, f"committed at {pos} before an after_sync covered it"
    assert events[-1] == ("commit", covered)
    assert len(live.engine.table("g", "t").rows) == 12 * 15


@pytest.mark.parametrize("hook", ["begin", "before_commit", "after_flush", "after_sync"])
def test_observer_message_reaches_the_client_only_with_its_errno(live: Server, hook: str) -> None:
    """MySQL's client sees the hook's own error (ER_RUN_HOOK_ERROR, 3100) when a statement
    or commit hook fails, the observer's message only in the error log; an observer that
    names its error (``ObserverError(message, errno=...)``) has its own message sent with
    that errno."""
    setup_table(live)
    from rpl.observers import ObserverError

    failure: list[ObserverError] = [ObserverError("commits are paused")]

    class Paused:
        @hookimpl(specname=hook)
        def refuse(self) -> None:
            raise failure[0]

    live.delegates.registry.register(Paused(), "paused")
    with pytest.raises(pymysql.err.MySQLError) as info:
        with connect(live).cursor() as cursor:
            cursor.execute("INSERT INTO g.t VALUES (7, 7)")
    default = FAILURES[hook]
    assert default is not None
    assert info.value.args[0] == default.errno
    assert "paused" not in info.value.args[1], "the default error carries MySQL's text only"
    failure[0] = ObserverError("commits are paused", errno=3100)
    with pytest.raises(pymysql.err.MySQLError) as info:
        with connect(live).cursor() as cursor:
            cursor.execute("INSERT INTO g.t VALUES (8, 8)")
    assert info.value.args == (3100, "commits are paused")
    failure[0] = ObserverError("paused by the operator", errno=1205, sqlstate="HY000")
    with pytest.raises(pymysql.err.MySQLError) as info:
        with connect(live).cursor() as cursor:
            cursor.execute("INSERT INTO g.t VALUES (9, 9)")
    assert info.value.args == (1205, "paused by the operator")


def test_the_begin_hook_runs_once_per_transaction_and_not_for_monitoring_reads(
    live: Server,
) -> None:
    """MySQL runs no ``begin`` hook for a read of performance_schema, information_schema
    or sys (a session held at begin can still be watched); a transaction's first other
    statement runs it, once."""
    setup_table(live)
    begun: list[int] = []

    class Begin:
        @hookimpl
        def begin(self, param):  # type: ignore[no-untyped-def]
            begun.append(param.thread_id)

    live.delegates.registry.register(Begin(), "begin")
    with connect(live).cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST")
        assert begun == []
        cursor.execute("SELECT * FROM performance_schema.threads, information_schema.SCHEMATA")
        assert begun == []
        cursor.execute("BEGIN")  # MySQL runs the hook for BEGIN itself
        assert len(begun) == 1
        cursor.execute("SELECT * FROM g.t")
        cursor.execute("INSERT INTO g.t VALUES (1, 1)")
        cursor.execute("COMMIT")
        assert len(begun) == 1
        cursor.execute("SET autocommit = 0")
        cursor.execute("SELECT ID FROM information_schema.PROCESSLIST")  # opens, no hook
        assert len(begun) == 1
        cursor.execute("SELECT * FROM g.t")  # the transaction's first other statement
        cursor.execute("SELECT * FROM g.t")
        cursor.execute("COMMIT")
        cursor.execute("SELECT * FROM g.t UNION SELECT 1, ID FROM information_schema.PROCESSLIST")
        assert len(begun) == 3
    # a refusing hook leaves no transaction open: the next statement runs it again
    refuse = [True]

    class Refuse:
        @hookimpl
        def begin(self, param):  # type: ignore[no-untyped-def]
            if refuse[0]:
                raise ObserverError("not now", errno=3796)

    from rpl.observers import ObserverError

    live.delegates.registry.register(Refuse(), "refuse")
    with connect(live).cursor() as cursor:
        for sql in ("SELECT * FROM g.t", "SELECT * FROM g.t", "BEGIN"):
            with pytest.raises(pymysql.err.MySQLError) as refused:
                cursor.execute(sql)
            assert refused.value.args[0] == 3796
        cursor.execute("SELECT 1")
        status: int = cursor.connection.server_status  # type: ignore[attr-defined]
        assert not status & 1  # SERVER_STATUS_IN_TRANS
        refuse[0] = False
        cursor.execute("SELECT COUNT(*) FROM g.t")
        assert cursor.fetchone() == (1,)
