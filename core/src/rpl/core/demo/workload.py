"""The demo's clients: writers that insert unique rows and readers that probe the rows
being inserted, every operation recorded as a history record
(:class:`rpl.core.validate.history.Operation`) with its start, end and outcome.

A write whose connection breaks before the answer is ``unknown`` (it may or may not have
committed); one the server refused is ``fail``; only ``ok`` writes were acknowledged. A
read records each row it found; a row not found is not a read of anything.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import attrs
import pymysql

from rpl.core.validate.history import READ, WRITE, Operation

TABLE = "d.t"


@attrs.define
class Recorder:
    """The history of one run, shared by the client threads."""

    origin: float = attrs.field(factory=time.time)
    operations: list[Operation] = attrs.field(factory=list)
    in_flight: dict[str, int] = attrs.field(factory=dict)
    lock: threading.Lock = attrs.field(factory=threading.Lock)
    stop: threading.Event = attrs.field(factory=threading.Event)

    def record(self, operation: Operation) -> None:
        """Append one operation."""
        with self.lock:
            self.operations.append(operation)

    def acknowledged(self) -> int:
        """Writes whose client saw OK, so far."""
        with self.lock:
            return sum(1 for o in self.operations if o.op == WRITE and o.outcome == "ok")

    def reads(self) -> int:
        """Rows read, so far."""
        with self.lock:
            return sum(1 for o in self.operations if o.op == READ)


def writer(connect: Callable[[], Any], number: int, recorder: Recorder) -> None:
    """Insert ``(number * 10**7 + i, 'w<number>')`` for i = 1, 2, ... until stopped or the
    connection breaks.
    """
    client = f"writer-{number}"
    try:
        connection = connect()
    except pymysql.MySQLError:
        return
    with connection.cursor() as cursor:
        for key in range(number * 10_000_000 + 1, (number + 1) * 10_000_000):
            if recorder.stop.is_set():
                return
            value = f"w{number}"
            with recorder.lock:
                recorder.in_flight[client] = key
            started, outcome = time.time(), "ok"
            try:
                cursor.execute(f"INSERT INTO {TABLE} VALUES ({key}, '{value}')")
            except pymysql.err.OperationalError:
                outcome = "unknown"
            except pymysql.MySQLError:
                outcome = "fail"
            recorder.record(
                Operation(client, WRITE, TABLE, str(key), value, started, time.time(), outcome)
            )
            if outcome == "unknown":
                return


def reader(connect: Callable[[], Any], number: int, recorder: Recorder) -> None:
    """Probe the rows the writers are inserting right now, until stopped or the
    connection breaks; each row is recorded the first time this reader sees it.
    """
    client = f"reader-{number}"
    seen: set[tuple[Any, Any]] = set()
    try:
        connection = connect()
    except pymysql.MySQLError:
        return
    with connection.cursor() as cursor:
        while not recorder.stop.is_set():
            with recorder.lock:
                probe = list(recorder.in_flight.values())
            if not probe:
                time.sleep(0.001)
                continue
            started = time.time()
            try:
                cursor.execute(
                    f"SELECT id, v FROM {TABLE} WHERE id IN ({','.join(map(str, probe))})"
                )
                rows = cursor.fetchall()
            except pymysql.MySQLError:
                return
            ended = time.time()
            for key, value in rows:
                if (key, value) not in seen:
                    seen.add((key, value))
                    recorder.record(
                        Operation(client, READ, TABLE, str(key), str(value), started, ended, "ok")
                    )


def start_clients(
    connect: Callable[[], Any], writers: int, readers: int, recorder: Recorder
) -> list[threading.Thread]:
    """The client threads, started."""
    threads = [
        threading.Thread(target=writer, args=(connect, n, recorder), daemon=True)
        for n in range(1, writers + 1)
    ]
    threads += [
        threading.Thread(target=reader, args=(connect, n, recorder), daemon=True)
        for n in range(1, readers + 1)
    ]
    for thread in threads:
        thread.start()
    return threads
