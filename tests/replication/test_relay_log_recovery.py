"""Relay log recovery at replica start (WL#4621): a damaged or cut relay log tail, and a
master.info that is ahead of the relay log (as after an OS crash that lost unsynced relay log
writes), never cause a gap or a duplicate."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ServerFactory, Writers
from test_async_replication import assert_same_data

from rpl.core.binlog.events import GtidEvent
from rpl.core.binlog.gtid import Gtid
from rpl.core.binlog.logfile import BinlogIndex, read_events, scan_valid_prefix
from rpl.core.binlog.trim import truncate_tail
from rpl.core.replication.relay_log_recovery import RelayScan
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import gtid_executed, replicate, slave_status, wait_for


def _received_everything_then_crash(
    replica: ServerProcess, source: ServerProcess, writers: Callable[..., Writers]
) -> str:
    """Load the source while the replica only receives; SIGKILL it; its last relay log."""
    replica.query("STOP SLAVE SQL_THREAD")
    writers(3).start(30).join()
    wait_for(
        lambda: slave_status(replica)["Retrieved_Gtid_Set"] == gtid_executed(source),
        30,
        "the receiver to fetch everything",
    )
    replica.kill()
    names = BinlogIndex(replica.datadir / "relay-bin.index").names()
    return str(replica.datadir / names[-1])


@pytest.mark.parametrize("damage", ["cut-1", "cut-40", "cut-900", "garbage", "bitflip"])
@pytest.mark.parametrize("auto_position", [True, False], ids=["gtid", "position"])
def test_damaged_relay_log_tail_with_master_info_ahead(
    servers: ServerFactory,
    source: ServerProcess,
    writers: Callable[..., Writers],
    damage: str,
    auto_position: bool,
) -> None:
    replica = servers("replica", "--sync-source-info=1")
    replicate(replica, source, auto_position=auto_position)
    path = _received_everything_then_crash(replica, source, writers)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        if damage.startswith("cut-"):
            f.truncate(size - int(damage[4:]))
        elif damage == "garbage":
            f.seek(size)
            f.write(os.urandom(77))
        else:
            f.seek(size - 30)
            byte = f.read(1)
            f.seek(size - 30)
            f.write(bytes((byte[0] ^ 0x10,)))
    replica.start()
    assert_same_data(source, replica)
    log = replica.error_log()
    assert "Relay log recovery: the receiver restarts at source log" in log
    assert "Truncating relay log" in log


def test_relay_log_recovery_on_discards_and_refetches(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    replica = servers("replica")
    replicate(replica, source, auto_position=False)
    path = _received_everything_then_crash(replica, source, writers)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    replica.start("--relay-log-recovery=ON")
    assert_same_data(source, replica)
    assert "relay logs discarded (relay_log_recovery=ON)" in replica.error_log()


def test_recovery_with_the_applier_never_started(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    replica = servers("replica", "--sync-source-info=1")
    replicate(replica, source, auto_position=False, start=False)
    replica.query("START SLAVE IO_THREAD")
    writers(2).start(20).join()
    wait_for(
        lambda: slave_status(replica)["Retrieved_Gtid_Set"] == gtid_executed(source),
        30,
        "the receiver to fetch everything",
    )
    assert slave_status(replica)["Relay_Log_File"] == ""
    replica.kill()
    path = replica.datadir / BinlogIndex(replica.datadir / "relay-bin.index").names()[-1]
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 10)
    replica.start()
    assert_same_data(source, replica)


def test_receiver_position_survives_relay_log_rotation(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    """Relay files started at max_relay_log_size name their source position, so the
    position recovery derives from the newest file is exactly where the receiver was."""
    replica = servers("replica", "--max-relay-log-size=4096")
    replicate(replica, source, auto_position=False)
    replica.query("STOP SLAVE SQL_THREAD")
    writers(3).start(30).join()
    wait_for(
        lambda: slave_status(replica)["Retrieved_Gtid_Set"] == gtid_executed(source),
        30,
        "the receiver to fetch everything",
    )
    before = slave_status(replica)
    assert len(BinlogIndex(replica.datadir / "relay-bin.index").names()) > 3
    replica.kill()
    replica.start("--skip-replica-start=ON")
    after = slave_status(replica)
    for column in ("Master_Log_File", "Read_Master_Log_Pos", "Retrieved_Gtid_Set"):
        assert after[column] == before[column], column
    assert (
        f"the receiver restarts at source log '{before['Master_Log_File']}' position "
        f"{before['Read_Master_Log_Pos']}"
    ) in replica.error_log()
    replica.query("START SLAVE")
    assert_same_data(source, replica)


def test_cut_at_every_byte_offset_of_the_last_transaction(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers], tmp_path: Path
) -> None:
    """The recovery scan on copies of a real relay log cut at every byte offset inside its
    last transaction: each is cut back to the transaction's start, and the receiver
    position and GTIDs are those after the transaction before it."""
    replica = servers("replica")
    replicate(replica, source, auto_position=False)
    path = Path(_received_everything_then_crash(replica, source, writers))
    entries = list(read_events(path, check_log_pos=False))
    gtid_at = max(i for i, e in enumerate(entries) if isinstance(e.event, GtidEvent))
    boundary = entries[gtid_at].position
    whole = RelayScan(replica_server_id(replica))
    truncate_tail(path, "relay log", relay=True, visit=whole.visit, wanted=whole.WANTED)
    decoded = [Gtid(e.event.sid, e.event.gno) for e in entries if isinstance(e.event, GtidEvent)]
    assert decoded and all(gtid in whole.gtids for gtid in decoded)
    data = path.read_bytes()
    copy = tmp_path / "relay-copy"
    copy.write_bytes(data[:boundary])
    before = RelayScan(replica_server_id(replica))
    scan_valid_prefix(copy, check_log_pos=False, visit=before.visit, wanted=before.WANTED)
    assert decoded[-1] not in before.gtids and all(g in before.gtids for g in decoded[:-1])
    assert whole.position is not None
    assert before.position == (whole.position[0], entries[gtid_at - 1].header.log_pos)
    for cut in range(boundary + 1, len(data)):
        copy.write_bytes(data[:cut])
        scan = RelayScan(replica_server_id(replica))
        truncate_tail(copy, "relay log", relay=True, visit=scan.visit, wanted=scan.WANTED)
        assert copy.stat().st_size == boundary, cut
        assert scan.position == before.position, cut
        assert scan.gtids == before.gtids, cut


def replica_server_id(replica: ServerProcess) -> int:
    """The replica's server_id (its relay log's own events carry it)."""
    return int(replica.options[replica.options.index("--server-id") + 1])
