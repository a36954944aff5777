"""``master.info`` and ``relay-log.info``: the replica's connection settings and positions.

Both are small JSON files in the data directory (``master.info`` and ``relay-log.info``
for the default channel ``''``, ``master-<channel>.info`` and ``relay-log-<channel>.info``
for a named one, as MySQL's file repositories named them), replaced atomically (write a temporary
file, fsync, rename, fsync the directory). The positions they hold are hints for a
restart, not the truth: the applier skips any transaction whose GTID this server has
already executed, so re-reading from an older position never applies anything twice
(the durable record of what was applied is the replica's own binlog, docs/replication.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

import attrs

from rpl.core.binlog.logfile import write_durably

MASTER_INFO = "master.info"
RELAY_LOG_INFO = "relay-log.info"


@attrs.define
class MasterInfo:
    """CHANGE MASTER settings and the receiver's position (SHOW SLAVE STATUS's source side)."""

    host: str = ""
    port: int = 3306
    user: str = ""
    password: str = ""
    log_file: str = ""
    log_pos: int = 4
    auto_position: bool = False
    heartbeat_period: float = 30.0
    connect_retry: int = 60
    retry_count: int = 86400
    master_uuid: str = ""
    master_server_id: int = 0
    retrieved_gtids: str = ""

    @property
    def configured(self) -> bool:
        """Whether CHANGE MASTER named a source."""
        return bool(self.host)


@attrs.define
class RelayLogInfo:
    """The applier's position: in the relay log, and in the source's binlog."""

    relay_log_file: str = ""
    relay_log_pos: int = 4
    master_log_file: str = ""
    master_log_pos: int = 0


_Info = TypeVar("_Info", MasterInfo, RelayLogInfo)


def file_name(kind: str, channel: str) -> str:
    """The file of ``kind`` (:data:`MASTER_INFO` or :data:`RELAY_LOG_INFO`) for
    ``channel``: ``master.info`` for ``''``, ``master-<channel>.info`` for a named one.
    """
    if not channel:
        return kind
    stem, _, suffix = kind.rpartition(".")
    return f"{stem}-{channel}.{suffix}"


def saved_channels(datadir: Path) -> list[str]:
    """The named channels whose master.info is in ``datadir``, by name."""
    prefix, suffix = "master-", ".info"
    return sorted(
        path.name[len(prefix) : -len(suffix)]
        for path in datadir.glob(f"{prefix}*{suffix}")
        if len(path.name) > len(prefix) + len(suffix)
    )


def load_master_info(datadir: Path, channel: str = "") -> MasterInfo | None:
    """The saved master.info of ``channel``, or None when there is none."""
    return _load(datadir / file_name(MASTER_INFO, channel), MasterInfo)


def load_relay_log_info(datadir: Path, channel: str = "") -> RelayLogInfo | None:
    """The saved relay-log.info of ``channel``, or None when there is none."""
    return _load(datadir / file_name(RELAY_LOG_INFO, channel), RelayLogInfo)


def _load(path: Path, kind: type[_Info]) -> _Info | None:
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    fields = {f.name for f in attrs.fields(kind)}
    return kind(**{k: v for k, v in data.items() if k in fields})


def save(datadir: Path, info: MasterInfo | RelayLogInfo, channel: str = "") -> None:
    """Replace the file of ``info`` (of ``channel``) atomically."""
    name = file_name(MASTER_INFO if isinstance(info, MasterInfo) else RELAY_LOG_INFO, channel)
    write_durably(datadir / name, json.dumps(attrs.asdict(info), indent=1).encode())


def remove(datadir: Path, *, master: bool, relay: bool, channel: str = "") -> None:
    """Delete the files of ``channel`` (RESET SLAVE [ALL])."""
    for name, wanted in ((MASTER_INFO, master), (RELAY_LOG_INFO, relay)):
        if wanted:
            (datadir / file_name(name, channel)).unlink(missing_ok=True)
