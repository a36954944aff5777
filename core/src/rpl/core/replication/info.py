"""``master.info`` and ``relay-log.info``: the replica's connection settings and positions.

Both are small JSON files in the data directory, replaced atomically (write a temporary
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


def load_master_info(datadir: Path) -> MasterInfo | None:
    """The saved master.info, or None when there is none."""
    return _load(datadir / MASTER_INFO, MasterInfo)


def load_relay_log_info(datadir: Path) -> RelayLogInfo | None:
    """The saved relay-log.info, or None when there is none."""
    return _load(datadir / RELAY_LOG_INFO, RelayLogInfo)


def _load(path: Path, kind: type[_Info]) -> _Info | None:
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    fields = {f.name for f in attrs.fields(kind)}
    return kind(**{k: v for k, v in data.items() if k in fields})


def save(datadir: Path, info: MasterInfo | RelayLogInfo) -> None:
    """Replace the file of ``info`` atomically."""
    name = MASTER_INFO if isinstance(info, MasterInfo) else RELAY_LOG_INFO
    write_durably(datadir / name, json.dumps(attrs.asdict(info), indent=1).encode())


def remove(datadir: Path, *, master: bool, relay: bool) -> None:
    """Delete the files (RESET SLAVE [ALL])."""
    for name, wanted in ((MASTER_INFO, master), (RELAY_LOG_INFO, relay)):
        if wanted:
            (datadir / name).unlink(missing_ok=True)
