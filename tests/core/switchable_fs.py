"""A passthrough FUSE file system that can turn read-only while files are open: the
fault a data directory meets when its file system remounts itself read-only after an
I/O error. ``mount -o remount,ro`` refuses while a server holds files open for writing,
and this kernel has no device-mapper to fail a block device, hence this.

Run as a process of its own: ``python switchable_fs.py ROOT MOUNTPOINT FLAG``. Every
operation passes through to ``ROOT``; while the file ``FLAG`` exists (outside the mount),
every operation that would change something (write, fsync, create, rename, unlink,
truncate, mkdir, chmod...) fails with EROFS, as on a read-only mount. Reads go on. It
ends when the mount point is unmounted. Written by hand: fusepy gives only the bindings.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

from fuse import FUSE, FuseOSError, Operations

_STAT_FIELDS = (
    "st_atime",
    "st_ctime",
    "st_gid",
    "st_mode",
    "st_mtime",
    "st_nlink",
    "st_size",
    "st_uid",
)
_VFS_FIELDS = (
    "f_bavail",
    "f_bfree",
    "f_blocks",
    "f_bsize",
    "f_favail",
    "f_ffree",
    "f_files",
    "f_flag",
    "f_frsize",
    "f_namemax",
)
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_TRUNC | os.O_CREAT


class Switchable(Operations):  # type: ignore[misc]
    """Passthrough to ``root``; EROFS for every change while ``flag`` exists."""

    def __init__(self, root: str, flag: str) -> None:
        self.root = root
        self.flag = flag

    def _path(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def _writable(self) -> None:
        if os.path.exists(self.flag):
            raise FuseOSError(errno.EROFS)

    def _call(self, function: Any, *args: Any) -> Any:
        try:
            return function(*args)
        except OSError as error:
            raise FuseOSError(error.errno) from None

    # reads
    def access(self, path: str, mode: int) -> None:
        if not os.access(self._path(path), mode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        st = self._call(os.lstat, self._path(path))
        return {key: getattr(st, key) for key in _STAT_FIELDS}

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *self._call(os.listdir, self._path(path))]

    def readlink(self, path: str) -> str:
        target: str = self._call(os.readlink, self._path(path))
        return target

    def statfs(self, path: str) -> dict[str, Any]:
        st = os.statvfs(self._path(path))
        return {key: getattr(st, key) for key in _VFS_FIELDS}

    def open(self, path: str, flags: int) -> int:
        if flags & _WRITING:
            self._writable()
        fd: int = self._call(os.open, self._path(path), flags)
        return fd

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        data: bytes = self._call(os.pread, fh, size, offset)
        return data

    def flush(self, path: str, fh: int) -> None:
        return None

    def release(self, path: str, fh: int) -> None:
        os.close(fh)

    # changes
    def create(self, path: str, mode: int, fi: Any = None) -> int:
        self._writable()
        fd: int = self._call(os.open, self._path(path), os.O_RDWR | os.O_CREAT, mode)
        return fd

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        self._writable()
        written: int = self._call(os.pwrite, fh, data, offset)
        return written

    def fsync(self, path: str, datasync: int, fh: int) -> None:
        self._writable()
        self._call(os.fdatasync if datasync else os.fsync, fh)

    def truncate(self, path: str, length: int, fh: int | None = None) -> None:
        self._writable()
        self._call(os.truncate, self._path(path), length)

    def chmod(self, path: str, mode: int) -> None:
        self._writable()
        self._call(os.chmod, self._path(path), mode)

    def chown(self, path: str, uid: int, gid: int) -> None:
        self._writable()
        self._call(os.chown, self._path(path), uid, gid)

    def mkdir(self, path: str, mode: int) -> None:
        self._writable()
        self._call(os.mkdir, self._path(path), mode)

    def rmdir(self, path: str) -> None:
        self._writable()
        self._call(os.rmdir, self._path(path))

    def unlink(self, path: str) -> None:
        self._writable()
        self._call(os.unlink, self._path(path))

    def rename(self, old: str, new: str) -> None:
        self._writable()
        self._call(os.rename, self._path(old), self._path(new))

    def symlink(self, target: str, source: str) -> None:
        self._writable()
        self._call(os.symlink, source, self._path(target))

    def link(self, target: str, source: str) -> None:
        self._writable()
        self._call(os.link, self._path(source), self._path(target))

    def utimens(self, path: str, times: Any = None) -> None:
        self._writable()
        self._call(os.utime, self._path(path), times)


if __name__ == "__main__":
    root, mountpoint, flag = sys.argv[1:4]
    FUSE(Switchable(root, flag), mountpoint, foreground=True, nothreads=False)
