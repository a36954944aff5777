"""Asynchronous replication between real rpl server processes.

Every test ends with the same proof: each replica's gtid_executed equals its
source's, CHECKSUM TABLE agrees, and each replica's own binlog holds every GTID
exactly once (nothing missing, nothing applied twice).
"""

from __future__ import annotations

import struct
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pymysql
import pytest
from conftest import ServerFactory, Writers

from rpl.core.binlog.events import GtidEvent
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import BinlogIndex
from rpl.core.testing.binlogs import binlog_entries
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.proxy import TcpProxy
from rpl.core.testing.topology import (
    create_replication_user,
    gtid_executed,
    replicate,
    slave_status,
    wait_caught_up,
    wait_for,
)


def binlog_gtids(server: ServerProcess) -> Counter[str]:
    """How often each GTID appears in ``server``'s binary log files."""
    seen: Counter[str] = Counter()
    for entry in binlog_entries(server.datadir):
        if isinstance(entry.event, GtidEvent):
            seen[f"{entry.event.sid}:{entry.event.gno}"] += 1
    return seen


def assert_same_data(source: ServerProcess, *replicas: ServerProcess) -> None:
    """gtid_executed and CHECKSUM TABLE equal; every GTID once in each replica's binlog."""
    expected = wait_caught_up(source, *replicas)
    checksum = source.query("CHECKSUM TABLE d.t")
    for replica in replicas:
        assert gtid_executed(replica) == expected
        assert replica.query("CHECKSUM TABLE d.t") == checksum
        counts = binlog_gtids(replica)
        duplicates = {g: n for g, n in counts.items() if n > 1}
        assert not duplicates, f"{replica.datadir.name} applied twice: {duplicates}"
        logged = GtidSet.parse(",".join(counts))
        assert str(logged) == expected, "the replica's binlog holds every GTID it executed"


def test_two_replicas_converge_under_concurrent_writers(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    load = writers(4).start()
    time.sleep(0.5)
    by_position = servers("by_position")
    by_gtid = servers("by_gtid")
    replicate(by_position, source, auto_position=False)
    replicate(by_gtid, source, auto_position=True)
    time.sleep(1.5)
    commits = load.join()
    assert commits > 50
    assert_same_data(source, by_position, by_gtid)
    status = slave_status(by_position)
    assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("Yes", "Yes")
    assert status["Auto_Position"] == 0 and slave_status(by_gtid)["Auto_Position"] == 1
    assert status["Exec_Master_Log_Pos"] == status["Read_Master_Log_Pos"]
    master = source.query("SHOW MASTER STATUS")[0]
    assert (status["Master_Log_File"], status["Read_Master_Log_Pos"]) == (master[0], master[1])
    assert status["Seconds_Behind_Master"] == 0
    assert status["Retrieved_Gtid_Set"] == status["Executed_Gtid_Set"]


def test_stop_and_start_each_thread_mid_load(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    replica = servers("replica")
    replicate(replica, source)
    load = writers(3).start()
    time.sleep(0.4)
    replica.query("STOP SLAVE IO_THREAD")
    status = slave_status(replica)
    assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("No", "Yes")
    time.sleep(0.4)
    replica.query("START SLAVE IO_THREAD")
    time.sleep(0.4)
    replica.query("STOP SLAVE SQL_THREAD")
    status = slave_status(replica)
    assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("Yes", "No")
    assert status["Seconds_Behind_Master"] is None
    time.sleep(0.4)
    replica.query("START SLAVE SQL_THREAD")
    replica.query("STOP SLAVE")
    replica.query("START SLAVE")
    load.join()
    assert_same_data(source, replica)


def test_stop_slave_twice_and_start_twice_give_notes(
    servers: ServerFactory, source: ServerProcess
) -> None:
    replica = servers("replica")
    replicate(replica, source)
    connection = replica.connect()
    with connection.cursor() as cursor:
        cursor.execute("START SLAVE")
        cursor.execute("SHOW WARNINGS")
        assert cursor.fetchall() == (
            ("Note", 3083, "Replication thread(s) for channel '' are already runnning."),
        )
        cursor.execute("STOP SLAVE")
        cursor.execute("STOP SLAVE")
        cursor.execute("SHOW WARNINGS")
        assert [row[1] for row in cursor.fetchall()] == [3084]
    connection.close()


def _dump_threads(source: ServerProcess) -> list[int]:
    return [
        row[0] for row in source.query("SHOW PROCESSLIST") if str(row[4]).startswith("Binlog Dump")
    ]


def kill_dump(source: ServerProcess) -> None:
    """KILL the replica's dump thread (once it has one: on a loaded machine the replica
    may not have connected yet); wait until the replica has a new one."""
    wait_for(lambda: len(_dump_threads(source)) == 1, 20, "the replica's dump thread")
    dumps = _dump_threads(source)
    source.query(f"KILL {dumps[0]}")
    wait_for(lambda: _dump_threads(source) not in ([], dumps), 20, "the replica to reconnect")


def cut_mid_transaction(source: ServerProcess) -> None:
    """Arm the one-shot fault that drops the dump's connection right after a BEGIN."""
    source.query("SET GLOBAL debug = '+d,dump_cut_mid_transaction'")
    wait_for(lambda: source.query("SELECT @@GLOBAL.debug") == [("",)], 20, "the fault to fire")


@pytest.mark.parametrize(
    "disrupt", [kill_dump, cut_mid_transaction], ids=["killed-dump", "cut-mid-transaction"]
)
@pytest.mark.parametrize("auto_position", [True, False], ids=["gtid", "position"])
def test_lost_connection_resumes_without_gap_or_duplicate(
    servers: ServerFactory,
    source: ServerProcess,
    writers: Callable[..., Writers],
    auto_position: bool,
    disrupt: Callable[[ServerProcess], None],
) -> None:
    replica = servers("replica")
    replicate(replica, source, auto_position=auto_position, master_connect_retry=1)
    load = writers(3).start()
    for _ in range(3):
        time.sleep(0.4)
        disrupt(source)
    load.join()
    assert_same_data(source, replica)
    assert replica.error_log().count("Error reading packet from server") >= 3
    if disrupt is cut_mid_transaction:
        assert source.error_log().count("dump_cut_mid_transaction") == 3


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_replica_restarted_mid_load(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers], how: str
) -> None:
    replica = servers("replica")
    replicate(replica, source, auto_position=how == "sigkill")
    load = writers(3).start()
    time.sleep(0.8)
    if how == "sigterm":
        assert replica.stop() == 0
    else:
        replica.kill()
    time.sleep(0.5)
    replica.start()
    time.sleep(0.8)
    load.join()
    assert_same_data(source, replica)
    assert (
        "Replica I/O thread for channel '': connected to source"
        in replica.error_log().split("ready for connections")[-1]
    ), "replication resumed by itself after the restart"


def test_source_restart_reconnects(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    replica = servers("replica")
    replicate(replica, source, master_connect_retry=1)
    writers(2).start(20).join()
    wait_caught_up(source, replica)
    assert source.stop() == 0
    wait_for(
        lambda: slave_status(replica)["Slave_IO_Running"] == "Connecting",
        20,
        "the receiver to notice",
    )
    wait_for(lambda: slave_status(replica)["Last_IO_Errno"] == 2003, 20, "a connect error")
    assert "error connecting to source 'repl@127.0.0.1" in slave_status(replica)["Last_IO_Error"]
    source.start()
    load = Writers(source, 2, start_id=100000).start(20)
    load.join()
    assert_same_data(source, replica)
    assert slave_status(replica)["Last_IO_Errno"] == 0


XID_EVENT = 16


def xid_events(stream: bytes) -> int:
    """XID events in a dump stream's packets (4-byte header, 0x00, the event)."""
    count, offset = 0, 0
    while offset + 4 <= len(stream):
        length = int.from_bytes(stream[offset : offset + 3], "little")
        packet = stream[offset + 4 : offset + 4 + length]
        if len(packet) == length and length > 5 and packet[0] == 0 and packet[1 + 4] == XID_EVENT:
            count += 1
        offset += 4 + length
    return count


def test_a_torn_stream_leaves_its_whole_transactions_to_the_applier(
    servers: ServerFactory, source: ServerProcess
) -> None:
    """The link breaks while the source sends (the stream ends inside a packet) and the
    source stays unreachable: the transactions that arrived whole are applied while the
    receiver waits to reconnect; the torn one is not."""
    replica = servers("replica")
    proxy = TcpProxy(source.port)
    try:
        replicate(replica, source, master_port=proxy.port, master_connect_retry=60)
        source.query("INSERT INTO d.t VALUES (1, 'before', 0)")
        wait_caught_up(source, replica)
        proxy.hold()
        for row in (2, 3, 4):
            source.query(f"INSERT INTO d.t VALUES ({row}, 'held', 0)")
        wait_for(lambda: xid_events(proxy.held()) == 3, 20, "three transactions held")
        proxy.tear(drop=5)  # the last XID event cut short
        wait_for(
            lambda: slave_status(replica)["Slave_IO_Running"] == "Connecting",
            20,
            "the receiver to lose the source",
        )
        wait_for(
            lambda: replica.query("SELECT COUNT(*) FROM d.t") == [(3,)],
            20,
            "the whole transactions applied",
        )
        time.sleep(0.5)
        assert replica.query("SELECT id FROM d.t ORDER BY id") == [(1,), (2,), (3,)]
    finally:
        proxy.close()


def test_chained_replication(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    middle = servers("middle")
    last = servers("last")
    replicate(middle, source)
    source.query("CREATE USER 'repl2'@'%' IDENTIFIED BY 'pw2'")
    source.query("GRANT REPLICATION SLAVE ON *.* TO 'repl2'@'%'")
    wait_caught_up(source, middle)
    replicate(last, middle, user="repl2", password="pw2")
    writers(3).start(30).join()
    assert_same_data(source, middle, last)
    events = last.query("SHOW BINLOG EVENTS IN 'binlog.000001'")
    assert {row[3] for row in events if row[2] == "Gtid"} == {1}, (
        "events keep the originating server_id down the chain"
    )


def test_replication_user_without_privilege_is_refused(
    servers: ServerFactory, source: ServerProcess
) -> None:
    source.query("CREATE USER 'weak'@'%' IDENTIFIED BY 'pw'")
    replica = servers("replica")
    replicate(replica, source, user="weak", password="pw")
    wait_for(lambda: slave_status(replica)["Slave_IO_Running"] == "No", 20, "the receiver to stop")
    status = slave_status(replica)
    assert status["Last_IO_Errno"] == 13120
    assert "REPLICATION SLAVE" in status["Last_IO_Error"]
    assert "COM_REGISTER_REPLICA" in status["Last_IO_Error"]
    assert status["Slave_SQL_Running"] == "Yes"
    assert source.query("SELECT 1") == [(1,)], "the source keeps serving"


def test_bad_change_master_values_get_clear_errors(
    servers: ServerFactory, source: ServerProcess
) -> None:
    replica = servers("replica")
    connection = replica.connect()
    cursor = connection.cursor()

    def error_of(sql: str) -> tuple[int, str]:
        with pytest.raises(pymysql.MySQLError) as caught:
            cursor.execute(sql)
        return caught.value.args[0], caught.value.args[1]

    assert error_of("START SLAVE")[0] == 1200
    assert error_of("CHANGE MASTER TO MASTER_HOST=''") == (
        1210,
        "Incorrect arguments to MASTER_HOST",
    )
    assert error_of("CHANGE MASTER TO MASTER_PORT=70000")[0] == 1210
    assert error_of("CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD=5000000")[0] == 1703
    assert error_of("CHANGE MASTER TO MASTER_AUTO_POSITION=1, MASTER_LOG_POS=100")[0] == 1777
    assert error_of("CHANGE MASTER TO MASTER_CONNECT_RETRY=0")[0] == 1210
    assert error_of("START SLAVE FOR CHANNEL 'other'")[0] == 3074
    assert error_of("CHANGE MASTER TO MASTER_DELAY=5")[0] == 1235
    assert slave_status(replica) == {}, "nothing was half-applied"
    replicate(replica, source)
    assert error_of("CHANGE MASTER TO MASTER_PORT=1")[0] == 3021
    assert error_of("RESET SLAVE")[0] == 1198
    wait_caught_up(source, replica)
    cursor.execute("STOP SLAVE")
    cursor.execute("CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD=120")
    cursor.execute("SHOW WARNINGS")
    assert [row[1] for row in cursor.fetchall()] == [1704]
    cursor.execute("RESET SLAVE ALL")
    assert slave_status(replica) == {}
    connection.close()


def test_dump_request_for_missing_file_or_position(
    servers: ServerFactory, source: ServerProcess
) -> None:
    replica = servers("replica")
    replicate(
        replica, source, auto_position=False, master_log_file="binlog.000099", master_log_pos=4
    )
    wait_for(lambda: slave_status(replica)["Last_IO_Errno"] != 0, 20, "an I/O error")
    status = slave_status(replica)
    assert status["Last_IO_Errno"] == 13114
    assert "Could not find first log file name in binary log index file" in status["Last_IO_Error"]
    wait_for(lambda: slave_status(replica)["Slave_IO_Running"] == "No", 20, "the stop")
    replica.query("STOP SLAVE")
    size = int(source.query("SHOW MASTER STATUS")[0][1])
    replica.query(f"CHANGE MASTER TO MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS={size + 100}")
    replica.query("START SLAVE")
    wait_for(lambda: slave_status(replica)["Last_IO_Errno"] == 13114, 20, "an I/O error")
    assert "position > file size" in slave_status(replica)["Last_IO_Error"]
    replica.query("STOP SLAVE")
    replica.query("CHANGE MASTER TO MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=7")
    replica.query("START SLAVE")
    wait_for(lambda: slave_status(replica)["Last_IO_Errno"] == 13114, 20, "an I/O error")
    assert "impossible position" in slave_status(replica)["Last_IO_Error"]
    assert source.query("SELECT 1") == [(1,)]


@pytest.mark.parametrize(
    "payload",
    [
        (0x12, b"\x04\x00"),  # truncated COM_BINLOG_DUMP
        (0x12, struct.pack("<IHI", 4, 0, 9) + b"nope.000001"),  # missing file
        (0x1E, struct.pack("<HII", 0, 9, 0) + struct.pack("<QI", 4, 3) + b"bad"),  # bad GTID set
    ],
    ids=["truncated", "missing-file", "bad-gtid-set"],
)
def test_malformed_dump_requests_get_errors(
    source: ServerProcess, payload: tuple[int, bytes]
) -> None:
    connection = source.connect(user="repl", password="repl-pw")
    with connection.cursor() as cursor:
        cursor.execute("SET @master_binlog_checksum = 'CRC32'")
    command, data = payload
    connection._execute_command(command, data)
    with pytest.raises(pymysql.MySQLError) as caught:
        connection._read_packet()
    assert caught.value.args[0] in (1236, 1158), caught.value.args
    if command == 0x12 and len(data) > 4:
        assert "Could not find first log file name" in caught.value.args[1]
    connection.close()
    assert source.query("SELECT COUNT(*) FROM d.t") == [(0,)], "the source keeps serving"


def test_relay_logs_are_read_by_mariadb_binlog(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    import shutil
    import subprocess

    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    if tool is None:
        pytest.fail("mariadb-binlog is not installed (tools/system-packages installs it)")
    replica = servers("replica", "--relay-log-purge=OFF", "--max-relay-log-size=8192")
    replicate(replica, source)
    writers(3).start(40).join()
    wait_caught_up(source, replica)
    replica.query("STOP SLAVE IO_THREAD")
    names = BinlogIndex(replica.datadir / "relay-bin.index").names()
    assert len(names) >= 3, names
    for name in names:
        result = subprocess.run(
            [tool, str(replica.datadir / name)], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
        assert "ERROR" not in result.stderr, result.stderr
    texts = "".join(
        subprocess.run(
            [tool, "-v", "--base64-output=decode-rows", str(replica.datadir / n)],
            capture_output=True,
            text=True,
        ).stdout
        for n in names
    )
    assert "### INSERT INTO `d`.`t`" in texts and "Rotate to" in texts


def test_relay_logs_are_purged_once_applied(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    replica = servers("replica", "--max-relay-log-size=8192")
    replicate(replica, source)
    writers(2).start(40).join()
    wait_caught_up(source, replica)
    names = BinlogIndex(replica.datadir / "relay-bin.index").names()
    assert len(names) <= 2, names
    on_disk = sorted(p.name for p in replica.datadir.glob("relay-bin.0*"))
    assert on_disk == sorted(names)


def test_read_only_refuses_clients_but_not_the_applier(
    servers: ServerFactory, source: ServerProcess
) -> None:
    replica = servers("replica")
    replicate(replica, source)
    source.query("CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
    source.query("GRANT ALL ON d.* TO 'app'@'%'")
    wait_caught_up(source, replica)
    replica.query("SET GLOBAL read_only = ON")
    source.query("INSERT INTO d.t VALUES (1, 'from source', 0)")
    wait_caught_up(source, replica)
    app = replica.connect(user="app", password="pw")
    with pytest.raises(pymysql.MySQLError) as caught, app.cursor() as cursor:
        cursor.execute("INSERT INTO d.t VALUES (2, 'local', 0)")
    assert caught.value.args[:2] == (
        1290,
        "The MySQL server is running with the --read-only "
        "option so it cannot execute this statement",
    )
    replica.query("SET GLOBAL super_read_only = ON")
    with pytest.raises(pymysql.MySQLError) as caught:
        replica.query("DELETE FROM d.t")
    assert caught.value.args[0] == 1290 and "--super-read-only" in caught.value.args[1]
    source.query("INSERT INTO d.t VALUES (3, 'from source', 0)")
    wait_caught_up(source, replica)
    assert replica.query("SELECT id FROM d.t ORDER BY id") == [(1,), (3,)]


def test_heartbeats_when_idle(servers: ServerFactory, source: ServerProcess) -> None:
    replica = servers("replica")
    replicate(replica, source, master_heartbeat_period=0.1)
    wait_caught_up(source, replica)

    def heartbeats() -> int:
        return int(replica.query("SHOW STATUS LIKE 'Slave_received_heartbeats'")[0][1])

    first = heartbeats()
    time.sleep(1.0)
    assert heartbeats() >= first + 4


def test_threads_are_visible(servers: ServerFactory, source: ServerProcess) -> None:
    replica = servers("replica")
    replicate(replica, source)
    wait_caught_up(source, replica)
    rows = replica.query(
        "SELECT NAME, PROCESSLIST_STATE FROM performance_schema.threads "
        "WHERE NAME LIKE 'thread/sql/replica%' ORDER BY NAME"
    )
    assert rows == [
        ("thread/sql/replica_io", "Waiting for source to send event"),
        ("thread/sql/replica_sql", "Replica has read all relay log; waiting for more updates"),
    ]
    dump = source.query(
        "SELECT PROCESSLIST_COMMAND, PROCESSLIST_STATE, PROCESSLIST_USER FROM "
        "performance_schema.threads WHERE NAME = 'thread/sql/one_connection' "
        "AND PROCESSLIST_COMMAND LIKE 'Binlog Dump%'"
    )
    assert dump == [
        (
            "Binlog Dump GTID",
            "Source has sent all binlog to replica; waiting for more updates",
            "repl",
        )
    ]
    # the querying session itself is a foreground thread, once, with its statement
    own = source.query(
        "SELECT TYPE, PROCESSLIST_ID = CONNECTION_ID(), PROCESSLIST_COMMAND, PROCESSLIST_INFO "
        "FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()"
    )
    assert own == [
        (
            "FOREGROUND",
            1,
            "Query",
            "SELECT TYPE, PROCESSLIST_ID = CONNECTION_ID(), PROCESSLIST_COMMAND, "
            "PROCESSLIST_INFO FROM performance_schema.threads WHERE PROCESSLIST_ID = "
            "CONNECTION_ID()",
        )
    ]
    replica.query("STOP SLAVE")
    assert replica.query(
        "SELECT COUNT(*) FROM performance_schema.threads WHERE NAME LIKE 'thread/sql/replica%'"
    ) == [(0,)]
    wait_for(
        lambda: (
            source.query(
                "SELECT COUNT(*) FROM performance_schema.threads WHERE TYPE = 'BACKGROUND' "
                "OR PROCESSLIST_COMMAND LIKE 'Binlog Dump%'"
            )
            == [(0,)]
        ),
        10,
        "the dump thread to end when the replica leaves",
    )


def test_show_replica_status_hosts_and_reset(servers: ServerFactory, source: ServerProcess) -> None:
    replica = servers("replica", "--report-host=replica-1")
    replicate(replica, source)
    wait_caught_up(source, replica)
    connection = replica.connect(cursorclass=pymysql.cursors.DictCursor)
    with connection.cursor() as cursor:
        cursor.execute("SHOW REPLICA STATUS")
        row = cursor.fetchone()
    connection.close()
    assert row["Source_Host"] == "127.0.0.1" and row["Replica_IO_Running"] == "Yes"
    assert row["Seconds_Behind_Source"] == 0 and row["Source_Server_Id"] == 1
    assert list(row)[:3] == ["Replica_IO_State", "Source_Host", "Source_User"]
    hosts = source.query("SHOW SLAVE HOSTS")
    uuid = replica.query("SELECT @@server_uuid")[0][0]
    assert hosts == [(2, "replica-1", replica.port, 1, uuid)]
    replica.query("STOP SLAVE")
    wait_for(lambda: source.query("SHOW SLAVE HOSTS") == [], 10, "the host to unregister")
    replica.query("RESET SLAVE")
    status = slave_status(replica)
    assert status["Master_Host"] == "127.0.0.1" and status["Read_Master_Log_Pos"] == 4
    assert status["Retrieved_Gtid_Set"] == "" and status["Relay_Log_File"] == ""
    assert not list(Path(replica.datadir).glob("relay-bin.0*"))
    replica.query("START SLAVE")
    wait_caught_up(source, replica)
    replica.query("STOP SLAVE")
    replica.query("RESET SLAVE ALL")
    assert slave_status(replica) == {}


def _status_value(server: ServerProcess, name: str) -> int:
    return int(server.query(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1])


@pytest.mark.parametrize("tracking", ["WRITESET", "COMMIT_ORDER"])
def test_applier_commits_independent_transactions_together(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers], tracking: str
) -> None:
    """Dependent transactions (a row inserted, then updated by the next transaction;
    hot counters updated by every writer) apply in order; independent ones share a sync."""
    source.query(f"SET GLOBAL binlog_transaction_dependency_tracking = '{tracking}'")
    source.query("CREATE TABLE d.hot (id INT PRIMARY KEY, n INT)")
    source.query("INSERT INTO d.hot VALUES (1, 0), (2, 0), (3, 0)")
    replica = servers("replica", "--replica-net-timeout=60")
    replicate(replica, source)
    wait_caught_up(source, replica)
    replica.query("STOP SLAVE SQL_THREAD")

    def counters() -> None:
        connection = source.connect()
        with connection.cursor() as cursor:
            for i in range(150):
                cursor.execute(f"UPDATE d.hot SET n = n + 1 WHERE id = {i % 3 + 1}")
        connection.close()

    import threading

    hot = [threading.Thread(target=counters) for _ in range(3)]
    for thread in hot:
        thread.start()
    load = writers(3).start(60)
    for thread in hot:
        thread.join()
    load.join()
    wait_for(
        lambda: slave_status(replica)["Retrieved_Gtid_Set"] == gtid_executed(source),
        30,
        "the receiver to fetch everything",
    )
    fsyncs = _status_value(replica, "Rpl_binlog_fsyncs")
    commits = _status_value(replica, "Binlog_commits")
    replica.query("START SLAVE SQL_THREAD")
    assert_same_data(source, replica)
    assert source.query("SELECT SUM(n) FROM d.hot") == replica.query("SELECT SUM(n) FROM d.hot")
    applied = _status_value(replica, "Binlog_commits") - commits
    synced = _status_value(replica, "Rpl_binlog_fsyncs") - fsyncs
    assert applied > 500
    if tracking == "WRITESET":
        assert synced * 4 < applied, f"{synced} syncs for {applied} transactions"


def test_dump_for_a_checksum_unaware_replica_is_refused(source: ServerProcess) -> None:
    connection = source.connect(user="repl", password="repl-pw")
    connection._execute_command(0x12, struct.pack("<IHI", 4, 0, 9) + b"binlog.000001")
    with pytest.raises(pymysql.MySQLError) as caught:
        connection._read_packet()
    assert caught.value.args[0] == 1236
    assert "can not handle replication events with the checksum" in caught.value.args[1]
    connection.close()


def test_dump_follows_source_binlog_rotations(servers: ServerFactory) -> None:
    source = servers("rotating_source", "--max-binlog-size=4096")
    create_replication_user(source)
    source.query("CREATE DATABASE d")
    source.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(40), n INT)")
    by_position = servers("by_position")
    replicate(by_position, source, auto_position=False)
    load = Writers(source, 3).start(40)
    source.query("FLUSH BINARY LOGS")
    load.join()
    assert len(source.query("SHOW BINARY LOGS")) > 5
    assert_same_data(source, by_position)
    status = slave_status(by_position)
    assert status["Master_Log_File"] == source.query("SHOW MASTER STATUS")[0][0]


def test_receiver_gives_up_after_master_retry_count(
    servers: ServerFactory, source: ServerProcess
) -> None:
    replica = servers("replica")
    replicate(replica, source, master_connect_retry=1, master_retry_count=2)
    wait_caught_up(source, replica)
    source.stop()
    wait_for(
        lambda: slave_status(replica)["Slave_IO_Running"] == "No", 30, "the receiver to give up"
    )
    status = slave_status(replica)
    assert status["Last_IO_Errno"] == 2003
    assert "retries: 2" in status["Last_IO_Error"] or "retries: 3" in status["Last_IO_Error"]
    assert status["Slave_SQL_Running"] == "Yes"
