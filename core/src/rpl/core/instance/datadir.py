"""The data directory: identity, the installed-plugin list and checkpoints.

Files (besides the binlogs, their index and ``error.log``):

* ``auto.cnf``: ``[auto]`` / ``server-uuid=...``, MySQL's file; written once at
  initialisation and never changed, so the server keeps its identity (and its GTIDs
  their source) across restarts.
* ``plugins``: the plugins INSTALL PLUGIN added, one name per line (MySQL keeps them in
  ``mysql.plugin``); they load again at every start.
* ``checkpoint``: the engine's committed state, the accounts and ``gtid_executed``
  as of a binlog position. Recovery loads it and replays the binlog after that
  position. It is replaced atomically (temporary file, fsync, rename, directory fsync),
  so a crash leaves either the old or the new checkpoint, never a mix.
"""

from __future__ import annotations

import configparser
import fcntl
import io
import os
import pickle
import uuid
from pathlib import Path

import attrs

from rpl.core.binlog.logfile import write_durably

CHECKPOINT_MAGIC = b"RPLCHECKPOINT\n"
CHECKPOINT_VERSION = 1


@attrs.frozen
class Checkpoint:
    """The durable state at a binlog position (``binlog_file`` '' = before any binlog)."""

    binlog_file: str
    binlog_pos: int
    gtid_executed: str
    engine: bytes
    accounts: list[dict[str, object]]


LOCK_FILE = "rpl.lock"


class DataDirectoryInUse(OSError):
    """Another live process holds the data directory's lock."""

    hint = (
        "Check that you do not already have another rpl server process using the same "
        "data directory."
    )
    """What the error log and the console add to the error (MySQL's MY-012575)."""


class DataDirectory:
    """Paths and small files of one server's data directory."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self._lock_fd: int | None = None

    def lock(self) -> None:
        """Hold an exclusive lock on the directory until :meth:`unlock` or this process
        ends (the kernel releases it even after kill -9). A second server on the same
        directory would replay, truncate and append to the live binlog under the first:
        DataDirectoryInUse instead, before anything is read or written.
        """
        fd = os.open(self.path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o640)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(fd)
            raise DataDirectoryInUse(
                exc.errno, f"Unable to lock ./{LOCK_FILE} error: {exc.errno}"
            ) from exc
        self._lock_fd = fd

    def unlock(self) -> None:
        """Release the lock (clean shutdown)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    @property
    def initialized(self) -> bool:
        """Whether the directory holds an initialised server."""
        return (self.path / "auto.cnf").exists()

    def server_uuid(self) -> uuid.UUID:
        """The persisted server_uuid."""
        parser = configparser.ConfigParser()
        parser.read(self.path / "auto.cnf")
        return uuid.UUID(parser["auto"]["server-uuid"])

    def write_server_uuid(self, value: uuid.UUID) -> None:
        """Write ``auto.cnf`` (initialisation only)."""
        write_durably(self.path / "auto.cnf", f"[auto]\nserver-uuid={value}\n".encode())

    def plugin_names(self) -> list[str]:
        """Plugins installed with INSTALL PLUGIN, in installation order."""
        path = self.path / "plugins"
        if not path.exists():
            return []
        return [line.strip() for line in path.read_text().splitlines() if line.strip()]

    def write_plugin_names(self, names: list[str]) -> None:
        """Persist the installed-plugin list."""
        write_durably(self.path / "plugins", "".join(f"{n}\n" for n in names).encode())

    def load_checkpoint(self) -> Checkpoint | None:
        """The last checkpoint, or None if there is none yet."""
        path = self.path / "checkpoint"
        if not path.exists():
            return None
        with path.open("rb") as f:
            if f.read(len(CHECKPOINT_MAGIC)) != CHECKPOINT_MAGIC:
                raise ValueError(f"{path} is not an rpl checkpoint")
            version, fields = pickle.load(f)
        if version != CHECKPOINT_VERSION:
            raise ValueError(f"checkpoint version {version} is not {CHECKPOINT_VERSION}")
        return Checkpoint(**fields)

    def write_checkpoint(self, checkpoint: Checkpoint) -> None:
        """Replace the checkpoint atomically and durably."""
        buffer = io.BytesIO()
        buffer.write(CHECKPOINT_MAGIC)
        pickle.dump(
            (CHECKPOINT_VERSION, attrs.asdict(checkpoint, recurse=False)),
            buffer,
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        write_durably(self.path / "checkpoint", buffer.getvalue())
