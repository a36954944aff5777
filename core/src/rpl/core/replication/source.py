"""The source side of replication: COM_REGISTER_SLAVE, COM_BINLOG_DUMP(_GTID), replica hosts.

* COM_REGISTER_SLAVE records the replica (SHOW SLAVE HOSTS lists it while its
  connection lives) and needs the REPLICATION SLAVE privilege, as in MySQL.
* COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID turn the connection's thread into the
  replica's dump thread (:mod:`rpl.core.replication.sender`); the connection ends
  with the dump, as mysqld's does.

Payload layouts: ../shared/reference/wire-format.md, "Replication commands".
"""

from __future__ import annotations

import threading

import attrs

from rpl.core.binlog.gtid import GtidSet
from rpl.core.errors import (
    ER_NET_READ_ERROR,
    MySQLError,
)
from rpl.core.execution.connection import CommandHandler, Connection
from rpl.core.net import responses as rsp
from rpl.core.net.packets import PayloadReader, ProtocolError
from rpl.core.replication.sender import BinlogSender, DumpRequest, fatal
from rpl.core.waits import thd_wait
from rpl.observers import BinlogDumpFlags

COM_BINLOG_DUMP = 0x12
COM_REGISTER_SLAVE = 0x15
COM_BINLOG_DUMP_GTID = 0x1E


@attrs.frozen
class ReplicaHost:
    """One row of SHOW SLAVE HOSTS."""

    server_id: int
    host: str
    port: int
    master_id: int
    replica_uuid: str


class ReplicaHosts:
    """Registered replicas, by the connection that registered them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hosts: dict[int, ReplicaHost] = {}

    def add(self, thread_id: int, host: ReplicaHost) -> None:
        """A replica registered on connection ``thread_id`` (re-registering replaces it)."""
        with self._lock:
            for other in [t for t, h in self._hosts.items() if h.server_id == host.server_id]:
                del self._hosts[other]
            self._hosts[thread_id] = host

    def remove(self, thread_id: int) -> None:
        """The replica's connection ended."""
        with self._lock:
            self._hosts.pop(thread_id, None)

    def rows(self) -> list[ReplicaHost]:
        """Every registered replica, by server id."""
        with self._lock:
            return sorted(self._hosts.values(), key=lambda h: h.server_id)


def _reply_error(connection: Connection, error: MySQLError) -> bool:
    try:
        connection.channel.write(rsp.err_packet(error.errno, error.sqlstate, error.message))
    except OSError:
        pass
    return False


def register_slave(hosts: ReplicaHosts, connection: Connection, payload: bytes) -> bool:
    """COM_REGISTER_SLAVE: remember the replica; OK."""
    session = connection.session
    assert session is not None
    try:
        session.require("REPLICATION SLAVE")
        reader = PayloadReader(payload, 1)
        server_id = reader.uint(4)
        host = reader.take(reader.uint(1)).decode("utf-8", "replace")
        reader.take(reader.uint(1))  # report_user
        reader.take(reader.uint(1))  # report_password
        port = reader.uint(2)
        reader.uint(4)  # recovery rank, ignored as MySQL does
        master_id = reader.uint(4) if reader.remaining() >= 4 else 0
    except ProtocolError:
        return _reply_error(connection, MySQLError.of(ER_NET_READ_ERROR))
    except MySQLError as exc:
        _reply_error(connection, exc)
        return True
    replica_uuid = session.user_vars.get("replica_uuid") or session.user_vars.get("slave_uuid")
    if isinstance(replica_uuid, bytes):
        replica_uuid = replica_uuid.decode("utf-8", "replace")
    hosts.add(
        connection.thread_id,
        ReplicaHost(
            server_id,
            host,
            port,
            master_id or connection.server.server_id,
            str(replica_uuid) if replica_uuid else "",
        ),
    )
    connection.on_close.append(lambda: hosts.remove(connection.thread_id))
    connection.channel.write(rsp.ok_packet(status=connection.status(session)))
    return True


def parse_binlog_dump(payload: bytes) -> DumpRequest:
    """COM_BINLOG_DUMP: pos u32, flags u16, server_id u32, file name to the end."""
    reader = PayloadReader(payload, 1)
    position = reader.uint(4)
    flags = reader.uint(2)
    server_id = reader.uint(4)
    name = reader.rest().decode("utf-8", "replace")
    return DumpRequest(name, position, BinlogDumpFlags(flags & 7), server_id, None)


def parse_binlog_dump_gtid(payload: bytes) -> DumpRequest:
    """COM_BINLOG_DUMP_GTID: flags u16, server_id u32, name length u32, name, pos u64,
    data length u32, the encoded GTID set.
    """
    reader = PayloadReader(payload, 1)
    flags = reader.uint(2)
    server_id = reader.uint(4)
    name = reader.take(reader.uint(4)).decode("utf-8", "replace")
    position = reader.uint(8)
    gtids = GtidSet()
    if reader.remaining() >= 4:
        size = reader.uint(4)
        try:
            gtids = GtidSet.decode(reader.take(size))
        except ValueError as exc:
            raise fatal(f"The replica sent a malformed GTID set: {exc}") from exc
    return DumpRequest(name, position, BinlogDumpFlags(flags & 7), server_id, gtids)


def binlog_dump(connection: Connection, payload: bytes) -> bool:
    """COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID: run the dump until it ends."""
    session = connection.session
    assert session is not None
    try:
        session.require("REPLICATION SLAVE")
        if payload[0] == COM_BINLOG_DUMP_GTID:
            request = parse_binlog_dump_gtid(payload)
        else:
            request = parse_binlog_dump(payload)
    except ProtocolError:
        return _reply_error(connection, MySQLError.of(ER_NET_READ_ERROR))
    except MySQLError as exc:
        return _reply_error(connection, exc)
    with thd_wait():  # the dump lasts as long as the replica: never a pool worker's turn
        BinlogSender(connection, request).run()
    return False


def register(commands: dict[int, CommandHandler], hosts: ReplicaHosts) -> None:
    """Put the source's protocol commands in a server's command table; COM_REGISTER_SLAVE
    records replicas in ``hosts``.
    """
    commands[COM_REGISTER_SLAVE] = lambda connection, payload: register_slave(
        hosts, connection, payload
    )
    commands[COM_BINLOG_DUMP] = binlog_dump
    commands[COM_BINLOG_DUMP_GTID] = binlog_dump
