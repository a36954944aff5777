"""Error-log lines have MySQL 8.0's layout."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from rpl.core import errorlog

LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z (\d+) \[(\w+)\] \[MY-(\d{6})\] "
    r"\[(\w+)\] (.*)$"
)


def test_lines_are_mysql_formatted(tmp_path: Path) -> None:
    path = tmp_path / "error.log"
    handler = errorlog.open_error_log(path)
    try:
        errorlog.set_thread_id(12)
        errorlog.log(
            errorlog.logger("test"),
            logging.WARNING,
            "Timeout waiting for reply",
            code=11153,
            subsystem="Repl",
        )
        errorlog.ErrorLog("rpl_semi_sync_master").note("Semi-sync replication switched ON")
    finally:
        logging.getLogger(errorlog.ROOT_LOGGER).removeHandler(handler)
        handler.close()
        errorlog.set_thread_id(0)
    first, second = (LINE.match(line) for line in path.read_text().splitlines())
    assert first and first.groups() == (
        "12",
        "Warning",
        "011153",
        "Repl",
        "Timeout waiting for reply",
    )
    assert second and second.group(2, 4, 5) == ("Note", "Repl", "Semi-sync replication switched ON")


def deep(n: int) -> None:
    """Raise from ``n`` frames down (a bug deep in a recursion)."""
    if n:
        deep(n - 1)
    raise ValueError("a server bug")


def test_a_repeated_failure_logs_its_traceback_once_and_cut(tmp_path: Path) -> None:
    path = tmp_path / "error.log"
    handler = errorlog.open_error_log(path)
    try:
        for _ in range(200):  # a client repeating a statement that hits the same bug
            try:
                deep(500)
            except ValueError as bug:
                errorlog.log(
                    errorlog.logger("test"), logging.ERROR, "Statement failed", exc_info=bug
                )
    finally:
        logging.getLogger(errorlog.ROOT_LOGGER).removeHandler(handler)
        handler.close()
    text = path.read_text()
    assert text.count("Traceback (most recent call last)") == 1
    lines = text.splitlines()
    entries = [line for line in lines if LINE.match(line)]
    assert len(entries) == 200, "one line a failure"
    assert entries[-1].endswith(
        "Statement failed (the same failure, 200 times: its traceback is logged at the first)"
    )
    frames = [line for line in lines if line.lstrip().startswith('File "')]
    assert 0 < len(frames) <= errorlog.TRACEBACK_FRAMES
    first = text[: text.index(entries[1])]
    assert len(first) < 8_000, f"the traceback took {len(first)} bytes"
