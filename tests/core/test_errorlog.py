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
