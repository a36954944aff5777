"""``thread_handling=pool-of-threads``: a few worker threads serve every connection.

With one thread per connection (mysqld's default, and rpl's) every command costs two
thread switches besides its work: the connection's thread wakes when the command
arrives, then waits its turn for CPython's interpreter lock, which another connection's
thread holds. A pool worker that finds many connections ready serves them one after the
other, switching to no other thread. Under sysbench oltp_insert at 16 threads this took
150 -> 129 µs of CPU off the compiled server's transaction (docs/server.md has the figures).

The pool is MariaDB's pool-of-threads with one thread group:

- A logged-in connection is registered in one epoll set with ``EPOLLONESHOT``: when its
  next command arrives, exactly one worker hears of it, and nobody again until the worker
  re-arms it after the command. Commands of one connection never run concurrently.
- The worker waiting in epoll (at most one: the listener) moves every ready connection to
  the pool's ready queue. Workers run queued commands while fewer than
  ``thread_pool_size`` are active; the others park.
- A worker is *active* while it runs a command and does not wait. A worker about to
  block says so (:func:`rpl.core.waits.thd_wait`: row lock waits, commits that wait for
  their group, the ``before_commit`` hook, binlog dumps): it stops counting, and an idle worker, or a new one up to
  ``thread_pool_max_threads``, takes over the queue and the listening. A command still
  running after ``thread_pool_stall_limit`` milliseconds stops counting too (a wait
  nobody announced), so the pool never stalls behind one.
- A worker parked for ``thread_pool_idle_timeout`` seconds ends while another listens; so
  one always stays, ready to listen.
- A connection armed for longer than its session's ``wait_timeout`` is taken out of the
  epoll set by the pool's timer (about once a second) and closed with MySQL's 4031. The
  connection is idle only while armed: queueing or serving it clears ``idle_since``
  under the pool's lock, so the timer never closes a connection a worker holds.

Status: ``Threadpool_threads`` and ``Threadpool_idle_threads``, as MariaDB's.
"""

from __future__ import annotations

import collections
import logging
import select
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from rpl.core import errorlog
from rpl.core.net import nogil
from rpl.core.waits import set_listener

if TYPE_CHECKING:
    from rpl.core.net.packets import PacketChannel


class Pooled(Protocol):
    """What the pool uses of a connection (:class:`rpl.core.execution.connection.Connection`
    is one): its socket and channel, and one command at a time run through ``run``, which
    ends the connection (``end``) when it returns False.
    """

    sock: socket.socket
    channel: PacketChannel
    thread_id: int
    idle_since: float | None
    """When the pool armed it for its next command; None while queued or served."""

    def command(self) -> bool:
        """Read and answer one command; False when the connection must close."""

    def wait_timeout(self) -> float:
        """How long, in seconds, the connection may sit idle."""

    def close_idle(self) -> None:
        """Tell the client it sat idle too long and end the connection."""

    def run(self, step: Callable[[], bool]) -> bool:
        """Run ``step``; False when the connection is over (and already ended)."""

    def end(self) -> None:
        """End the connection (close its session and socket)."""


_log = errorlog.logger("threadpool")

ONE_THREAD_PER_CONNECTION = "one-thread-per-connection"
POOL_OF_THREADS = "pool-of-threads"
_ARMED = select.EPOLLIN | select.EPOLLONESHOT
_POLL_SECONDS = 1.0
"""How long the listener waits in epoll before it looks whether the pool is stopping."""
_READY_PER_POLL = 64
_SWEEP_SECONDS = 1.0
"""How often the pool's timer looks for connections idle past their wait_timeout."""


class _Worker:
    """One worker thread; counted in the pool's active workers while ``counted``."""

    def __init__(self, pool: ThreadPool) -> None:
        self.pool = pool
        self.counted = False
        self.started = 0.0

    def wait_begin(self) -> None:
        """The worker is about to block (rpl.core.waits.WaitListener)."""
        self.pool.wait_begin(self)

    def wait_end(self) -> None:
        """The worker runs again (rpl.core.waits.WaitListener)."""
        self.pool.wait_end(self)


class ThreadPool:
    """Worker threads serving logged-in connections; the sizes are read at each use
    (the variables are dynamic).
    """

    def __init__(
        self,
        size: Callable[[], int],
        max_threads: Callable[[], int],
        stall_limit_ms: Callable[[], int],
        idle_timeout: Callable[[], int],
    ) -> None:
        self._size = size
        self._max_threads = max_threads
        self._stall_limit_ms = stall_limit_ms
        self._idle_timeout = idle_timeout
        self._epoll = select.epoll()
        self._connections: dict[int, Pooled] = {}
        self._ready: collections.deque[tuple[int, Pooled]] = collections.deque()
        self._lock = threading.Lock()
        self._parked = threading.Condition(self._lock)
        self._running: set[_Worker] = set()
        self._threads = 0
        self._starting = 0
        self._idle = 0
        self._active = 0
        self._listening = False
        self._stopping = False

    # ---------------------------------------------------------------- status
    @property
    def threads(self) -> int:
        """Worker threads (Threadpool_threads)."""
        return self._threads

    @property
    def idle_threads(self) -> int:
        """Parked worker threads (Threadpool_idle_threads)."""
        return self._idle

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start the first worker and the stall check."""
        with self._lock:
            self._spawn()
        threading.Thread(target=self._stall_check, name="rpl-threadpool-timer", daemon=True).start()

    def stop(self) -> None:
        """Let every worker end (after the server closed the connections)."""
        with self._lock:
            self._stopping = True
            self._parked.notify_all()

    def add(self, connection: Pooled) -> None:
        """Serve ``connection`` (logged in) from now on."""
        fd = connection.sock.fileno()
        with self._lock:
            self._connections[fd] = connection
            if connection.channel.buffered():
                connection.idle_since = None
                self._ready.append((fd, connection))
            else:
                connection.idle_since = time.monotonic()
                self._epoll.register(fd, _ARMED)
            self._dispatch()

    # -------------------------------------------------------------- workers
    def _spawn(self) -> None:
        """Start a worker (lock held)."""
        self._threads += 1
        self._starting += 1
        threading.Thread(
            target=self._work, args=(_Worker(self),), name="rpl-threadpool-worker", daemon=True
        ).start()

    def _dispatch(self) -> None:
        """Wake or start a worker if there is work or no listener, and room for one more
        active worker (lock held).
        """
        if self._stopping or self._active >= self._size():
            return
        if not self._ready and self._listening:
            return
        if self._idle:
            self._parked.notify()
        elif not self._starting and self._threads < self._max_threads():
            self._spawn()

    def _work(self, worker: _Worker) -> None:
        set_listener(worker)
        self._lock.acquire()
        self._starting -= 1
        try:
            while not self._next_turn(worker):
                pass
        finally:
            self._threads -= 1
            self._lock.release()
            set_listener(None)

    def _next_turn(self, worker: _Worker) -> bool:
        """Serve one queued connection, listen once, or park (lock held on entry and
        exit); True when the worker must end.
        """
        room = self._active < self._size()
        if self._ready and room:
            fd, connection = self._ready.popleft()
            self._begin(worker)
            self._lock.release()
            try:
                self._serve(fd, connection)
            finally:
                self._lock.acquire()
                self._finish(worker)
            return False
        if self._stopping:
            return True
        if room and not self._listening:
            self._listen()
            return False
        self._idle += 1
        woken = self._parked.wait(self._idle_timeout())
        self._idle -= 1
        # idle long enough: end, unless this worker is the one that would listen next (the
        # others may all be blocked, a binlog dump for as long as its replica stays)
        return not woken and self._listening and not self._ready

    def _listen(self) -> None:
        """Wait in epoll and queue what is ready (lock held on entry and exit)."""
        self._listening = True
        self._lock.release()
        try:
            events = self._epoll.poll(_POLL_SECONDS, _READY_PER_POLL)
        finally:
            self._lock.acquire()
            self._listening = False
        for fd, _ in events:
            connection = self._connections.get(fd)
            if connection is not None:
                connection.idle_since = None
                self._ready.append((fd, connection))
        if len(self._ready) > 1 and self._active + 1 < self._size():
            self._dispatch()  # room for another worker besides this one

    def _serve(self, fd: int, connection: Pooled) -> None:
        """One command of ``connection``, then re-arm it, queue it again (a pipelined
        command already read) or forget it (closed).
        """
        errorlog.set_thread_id(connection.thread_id)
        if not connection.run(connection.command):
            self._forget(fd, connection)
            return  # its socket is closed: epoll forgot it
        if connection.channel.buffered():
            with self._lock:
                self._ready.append((fd, connection))
            return
        connection.idle_since = time.monotonic()  # before arming: a listener clears it
        try:
            nogil.epoll_modify(self._epoll, fd, _ARMED)
        except OSError as lost:  # the socket went away under us (a KILL): forget it
            errorlog.log(
                _log,
                logging.INFO,
                f"Connection {connection.thread_id} left the thread pool: {lost}",
                code=10000,
            )
            connection.end()
            self._forget(fd, connection)

    def _forget(self, fd: int, connection: Pooled) -> None:
        """Drop an ended connection, unless its descriptor number already serves a newer
        connection (a closed socket's number is reused by the next accept).
        """
        with self._lock:
            if self._connections.get(fd) is connection:
                del self._connections[fd]

    # ------------------------------------------------------ active accounting
    def _count(self, worker: _Worker) -> None:
        """``worker`` counts as active from now (lock held)."""
        worker.counted, worker.started = True, time.monotonic()
        self._active += 1

    def _uncount(self, worker: _Worker) -> None:
        """``worker`` no longer counts as active, if it did (lock held)."""
        if worker.counted:
            worker.counted = False
            self._active -= 1

    def _begin(self, worker: _Worker) -> None:
        self._count(worker)
        self._running.add(worker)

    def _finish(self, worker: _Worker) -> None:
        self._uncount(worker)
        self._running.discard(worker)

    def wait_begin(self, worker: _Worker) -> None:
        """``worker`` blocks: it stops counting and another worker may serve."""
        with self._lock:
            if worker.counted:
                self._uncount(worker)
                self._dispatch()

    def wait_end(self, worker: _Worker) -> None:
        """``worker`` runs again: it counts again (the pool may be over its size until
        a command ends).
        """
        with self._lock:
            if worker in self._running and not worker.counted:
                self._count(worker)

    def _stall_check(self) -> None:
        """Every thread_pool_stall_limit ms: a command running that long stops counting;
        about once a second, connections idle past their wait_timeout are closed.
        """
        next_sweep = time.monotonic() + _SWEEP_SECONDS
        while True:
            limit = max(self._stall_limit_ms(), 1) / 1000
            time.sleep(min(limit, _SWEEP_SECONDS))
            idle: list[Pooled] = []
            with self._lock:
                if self._stopping:
                    return
                now = time.monotonic()
                for worker in self._running:
                    if now - worker.started >= limit:
                        self._uncount(worker)
                self._dispatch()
                if now >= next_sweep:
                    next_sweep = now + _SWEEP_SECONDS
                    idle = self._take_idle(now)
            for connection in idle:
                connection.close_idle()

    def _take_idle(self, now: float) -> list[Pooled]:
        """The armed connections idle past their wait_timeout, out of the pool (lock held)."""
        idle = [
            (fd, c)
            for fd, c in self._connections.items()
            if c.idle_since is not None and now - c.idle_since >= c.wait_timeout()
        ]
        for fd, connection in idle:
            del self._connections[fd]
            connection.idle_since = None
            try:
                self._epoll.unregister(fd)
            except OSError:  # already closed: nothing to unregister
                pass
        return [connection for _, connection in idle]
