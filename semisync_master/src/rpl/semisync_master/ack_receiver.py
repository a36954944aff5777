"""The ACK receiver thread (WL#6630): one thread reads every semisync replica's ACKs.

Before WL#6630 each dump thread, after sending an event with the sync flag, waited for
the replica's ACK itself, so it could not send the next event meanwhile. With this thread
the dump threads only send; the ACKs come back on the same dump connections and this
thread polls them all.

What holds:

* It runs exactly while ``rpl_semi_sync_master_enabled`` is ON (``start``/``stop``); the
  list of semisync replicas is kept while it is down, so replicas connected before it
  starts are polled once it does.
* Its state is visible in performance_schema.threads as ``thread/semisync/Ack_receiver``:
  "Waiting for semi-sync slave connection" (no replica), "Waiting for semi-sync ACK from
  slave" (polling, 1 s at most, so ``stop`` is prompt), "Reading semi-sync ACK from slave".
* A replica's ACK reaches :meth:`SemisyncMaster.report_ack`. A malformed ACK (short, bad
  magic, bad file name) is logged as an error and that replica is dropped from the list;
  a closed connection (a note) drops it too, and its dump thread then ends (the server's
  NET service records that the peer closed). The thread goes on.
"""

from __future__ import annotations

import os
import select
import threading

from rpl.observers import NetError, ServerNet, ServerServices
from rpl.observers.semisync import MalformedPacket, decode_ack
from rpl.semisync_master.master import SemisyncMaster

THREAD_NAME = "thread/semisync/Ack_receiver"
STATE_WAIT_SLAVE = "Waiting for semi-sync slave connection"
STATE_WAIT_ACK = "Waiting for semi-sync ACK from slave"
STATE_READ_ACK = "Reading semi-sync ACK from slave"
POLL_SECONDS = 1.0
COM_QUIT = b"\x01"
"""What a replica's client library sends as it closes the dump connection."""


class AckReceiver:
    """The ACK receiver thread and the list of semisync replicas it polls."""

    def __init__(self, master: SemisyncMaster, services: ServerServices) -> None:
        self.master = master
        self.services = services
        self._replicas: dict[int, tuple[int, ServerNet]] = {}
        """thread id of the dump -> (replica server_id, its connection)."""
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()

    # ----------------------------------------------------------- replicas
    def add_replica(self, dump_thread_id: int, server_id: int, net: ServerNet) -> None:
        """A semisync replica's dump started: poll its connection."""
        with self._lock:
            self._replicas[dump_thread_id] = (server_id, net)
        self._wake()

    def remove_replica(self, dump_thread_id: int) -> None:
        """Its dump ended: stop polling it."""
        with self._lock:
            self._replicas.pop(dump_thread_id, None)
        self._wake()

    def _wake(self) -> None:
        os.write(self._wake_w, b"x")

    # -------------------------------------------------------------- thread
    @property
    def running(self) -> bool:
        """Whether the thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the thread (idempotent)."""
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="rpl-semisync-ack", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it (idempotent)."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        self._wake()
        thread.join()
        self._thread = None

    def close(self) -> None:
        """Stop and release the wake-up pipe (plugin deinit)."""
        self.stop()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _run(self) -> None:
        handle = self.services.threads.register_thread(THREAD_NAME)
        self.services.error_log.note("Starting ack receiver thread")
        try:
            while not self._stop.is_set():
                self._poll_once(handle.set_state)
        finally:
            handle.close()
            self.services.error_log.note("Stopping ack receiver thread")

    def _poll_once(self, set_state: object) -> None:
        assert callable(set_state)
        with self._lock:
            replicas = dict(self._replicas)
        set_state(STATE_WAIT_ACK if replicas else STATE_WAIT_SLAVE)
        by_fd: dict[int, int] = {}
        for thread_id, (_, net) in replicas.items():
            try:
                by_fd[net.fileno()] = thread_id
            except (OSError, ValueError):
                self._drop(thread_id, "its connection is closed")
        try:
            readable, _, _ = select.select([self._wake_r, *by_fd], [], [], POLL_SECONDS)
        except (OSError, ValueError):
            return  # a connection closed under the poll: the next round rebuilds the list
        if self._wake_r in readable:
            os.read(self._wake_r, 4096)
        for fd in readable:
            if fd in by_fd:
                set_state(STATE_READ_ACK)
                self._read_ack(by_fd[fd], *replicas[by_fd[fd]])

    def _read_ack(self, thread_id: int, server_id: int, net: ServerNet) -> None:
        """Report every ACK that has arrived on ``net``: read until nothing is left (a
        read may bring several, and the connection may keep some for the next read),
        then report them, so the waiters they release find this thread back in ``select``.
        """
        acks: list[tuple[str, int]] = []
        why: str | None = None
        error = True
        while why is None:
            try:
                payload = net.read(timeout=0)
            except NetError as exc:
                if not exc.timed_out:
                    why, error = f"replica server_id {server_id} disconnected ({exc})", False
                break
            if payload == COM_QUIT:
                break  # the replica is leaving; the next read sees the connection closed
            try:
                ack = decode_ack(payload)
            except MalformedPacket as exc:
                why = f"malformed ACK from replica server_id {server_id}: {exc}"
            else:
                acks.append((ack.log_file, ack.log_pos))
        for position in acks:
            self.master.report_ack(server_id, position)
        if why is not None:
            self._drop(thread_id, why, error=error)

    def _drop(self, thread_id: int, why: str, error: bool = True) -> None:
        log = self.services.error_log
        (log.error if error else log.note)(
            f"Semi-sync ACK receiver: {why}; the replica is dropped from the ACK receiver's list"
        )
        with self._lock:
            self._replicas.pop(thread_id, None)
