"""performance_schema's replication tables for the replica's receiver channels.

The statement layer defines the tables (:mod:`rpl.core.execution.system_tables`) and
cannot import the replica; at start the replica registers the providers here
(:func:`register`), which read the same channel state SHOW SLAVE STATUS reads, so the
two never disagree. Each table has one row per channel once CHANGE MASTER named its
source (CHANNEL_NAME: ``''`` for the default channel, then the named ones by name), none
before, as MySQL's. The applier is single-threaded: as in MySQL with
``replica_parallel_workers=0``, replication_applier_status_by_worker shows it as worker 0
and replication_applier_status_by_coordinator stays empty.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping

from rpl.core.execution.session import Session
from rpl.core.execution.virtual_tables import PERFORMANCE_SCHEMA, VirtualTables
from rpl.core.replication.channel import ReplicaChannel, ReplicaChannels

ZERO_TIMESTAMP = "0000-00-00 00:00:00.000000"
"""What performance_schema shows for a moment that has not happened (no error yet)."""

Facts = Callable[[ReplicaChannel], dict[str, object]]


def error_timestamp(when: str) -> str:
    """SHOW SLAVE STATUS's error time (``YYMMDD HH:MM:SS``) as performance_schema's
    ``timestamp(6)``; :data:`ZERO_TIMESTAMP` when there was no error.
    """
    if not when:
        return ZERO_TIMESTAMP
    moment = datetime.datetime.strptime(when, "%y%m%d %H:%M:%S")
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def _moment(seconds: float) -> str:
    """A time.time() moment as ``timestamp(6)``; :data:`ZERO_TIMESTAMP` for none (0)."""
    if not seconds:
        return ZERO_TIMESTAMP
    return datetime.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S.%f")


def _connection_configuration(channel: ReplicaChannel) -> dict[str, object]:
    info = channel.master_info
    return {
        "HOST": info.host,
        "PORT": info.port,
        "USER": info.user,
        "NETWORK_INTERFACE": "",
        "AUTO_POSITION": "1" if info.auto_position else "0",
        "SSL_ALLOWED": "NO",
        **dict.fromkeys(("SSL_CA_FILE", "SSL_CA_PATH", "SSL_CERTIFICATE"), ""),
        **dict.fromkeys(("SSL_CIPHER", "SSL_KEY", "SSL_CRL_FILE", "SSL_CRL_PATH"), ""),
        "SSL_VERIFY_SERVER_CERTIFICATE": "NO",
        "CONNECTION_RETRY_INTERVAL": info.connect_retry,
        "CONNECTION_RETRY_COUNT": info.retry_count,
        "HEARTBEAT_INTERVAL": f"{info.heartbeat_period:.3f}",
        "TLS_VERSION": "",
        "PUBLIC_KEY_PATH": "",
        "GET_PUBLIC_KEY": "NO",
        "NETWORK_NAMESPACE": "",
        "COMPRESSION_ALGORITHM": "uncompressed",
        "ZSTD_COMPRESSION_LEVEL": 3,
        "SOURCE_CONNECTION_AUTO_FAILOVER": "0",
        "GTID_ONLY": "0",
    }


def _connection_status(channel: ReplicaChannel) -> dict[str, object]:
    errno, message, when = channel.last_io_error
    running = channel.io_running
    state = ("ON" if channel.io_connected else "CONNECTING") if running else "OFF"
    return {
        "GROUP_NAME": "",
        "SOURCE_UUID": channel.master_info.master_uuid,
        "THREAD_ID": channel.io_thread_id if running else None,
        "SERVICE_STATE": state,
        "COUNT_RECEIVED_HEARTBEATS": channel.heartbeats,
        "LAST_HEARTBEAT_TIMESTAMP": _moment(channel.last_heartbeat),
        "RECEIVED_TRANSACTION_SET": str(channel.retrieved_gtids),
        "LAST_ERROR_NUMBER": errno,
        "LAST_ERROR_MESSAGE": message,
        "LAST_ERROR_TIMESTAMP": error_timestamp(when),
        **_zero_timestamps("LAST_QUEUED_TRANSACTION", "QUEUEING_TRANSACTION"),
        "LAST_QUEUED_TRANSACTION": "",
        "QUEUEING_TRANSACTION": "",
    }


def _applier_configuration(channel: ReplicaChannel) -> dict[str, object]:
    return {
        "DESIRED_DELAY": 0,
        "PRIVILEGE_CHECKS_USER": None,
        "REQUIRE_ROW_FORMAT": "NO",
        "REQUIRE_TABLE_PRIMARY_KEY_CHECK": "STREAM",
        "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_TYPE": "OFF",
        "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_VALUE": None,
    }


def _applier_status(channel: ReplicaChannel) -> dict[str, object]:
    return {
        "SERVICE_STATE": "ON" if channel.sql_running else "OFF",
        "REMAINING_DELAY": None,
        "COUNT_TRANSACTIONS_RETRIES": 0,
    }


def _applier_thread(channel: ReplicaChannel) -> dict[str, object]:
    """The applier thread's state and last error (the coordinator's and the one
    worker's: the applier applies in its own thread).
    """
    errno, message, when = channel.last_sql_error
    running = channel.sql_running
    return {
        "THREAD_ID": channel.sql_thread_id if running else None,
        "SERVICE_STATE": "ON" if running else "OFF",
        "LAST_ERROR_NUMBER": errno,
        "LAST_ERROR_MESSAGE": message,
        "LAST_ERROR_TIMESTAMP": error_timestamp(when),
    }


def _by_worker(channel: ReplicaChannel) -> dict[str, object]:
    return {
        "WORKER_ID": 0,
        **_applier_thread(channel),
        **_zero_timestamps("LAST_APPLIED_TRANSACTION", "APPLYING_TRANSACTION"),
        "LAST_APPLIED_TRANSACTION": "",
        "APPLYING_TRANSACTION": "",
        "LAST_APPLIED_TRANSACTION_RETRIES_COUNT": 0,
        "LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_NUMBER": 0,
        "LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_MESSAGE": "",
        "APPLYING_TRANSACTION_RETRIES_COUNT": 0,
        "APPLYING_TRANSACTION_LAST_TRANSIENT_ERROR_NUMBER": 0,
        "APPLYING_TRANSACTION_LAST_TRANSIENT_ERROR_MESSAGE": "",
    }


_TIMESTAMP_SUFFIXES = (
    "_ORIGINAL_COMMIT_TIMESTAMP",
    "_IMMEDIATE_COMMIT_TIMESTAMP",
    "_START_QUEUE_TIMESTAMP",
    "_END_QUEUE_TIMESTAMP",
    "_START_BUFFER_TIMESTAMP",
    "_END_BUFFER_TIMESTAMP",
    "_START_APPLY_TIMESTAMP",
    "_END_APPLY_TIMESTAMP",
    "_LAST_TRANSIENT_ERROR_TIMESTAMP",
)


def _zero_timestamps(*prefixes: str) -> dict[str, object]:
    """The per-transaction timestamps of ``prefixes`` (the provider fills only the
    columns its table has), zero: the channel does not time each transaction.
    """
    return {p + s: ZERO_TIMESTAMP for p in prefixes for s in _TIMESTAMP_SUFFIXES}


_TABLES: Mapping[str, Facts] = {
    "replication_connection_configuration": _connection_configuration,
    "replication_connection_status": _connection_status,
    "replication_applier_configuration": _applier_configuration,
    "replication_applier_status": _applier_status,
    "replication_applier_status_by_worker": _by_worker,
}


def register(tables: VirtualTables, channels: ReplicaChannels) -> None:
    """Fill the replica's performance_schema tables from ``channels``."""
    for name, facts in _TABLES.items():
        tables.provide(PERFORMANCE_SCHEMA, name, _provider(channels, facts))


def _provider(
    channels: ReplicaChannels, facts: Facts
) -> Callable[[Session], Iterable[Mapping[str, object]]]:
    def rows(session: Session) -> Iterable[Mapping[str, object]]:
        return [
            {"CHANNEL_NAME": channel.name, **facts(channel)}
            for channel in channels.all()
            if channel.master_info.configured
        ]

    return rows
