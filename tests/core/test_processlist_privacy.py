"""What one account may see of others: SHOW PROCESSLIST shows another user's sessions only
to an account with PROCESS, and never a password (MySQL's ``<secret>`` rewrite); SHOW
GRANTS FOR another account needs SELECT on the mysql schema (1044)."""

from __future__ import annotations

import pymysql
import pytest

from rpl.core.sql.redact import redacted
from rpl.core.testing.process import ServerProcess


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        (
            "CREATE USER 'u'@'%' IDENTIFIED BY 'secret'",
            "CREATE USER 'u'@'%' IDENTIFIED BY <secret>",
        ),
        (
            "ALTER USER u IDENTIFIED WITH mysql_native_password BY 'it''s'",
            "ALTER USER u IDENTIFIED WITH mysql_native_password BY <secret>",
        ),
        ("SET PASSWORD FOR 'u'@'%' = 'x'", "SET PASSWORD FOR 'u'@'%' = <secret>"),
        (
            "CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD = 'pw', MASTER_PORT=3",
            "CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD = <secret>, MASTER_PORT=3",
        ),
        ("CREATE USER u IDENTIFIED BY 'unterminated", "CREATE USER u IDENTIFIED BY <secret>"),
        ("SELECT 'IDENTIFIED BY x'", "SELECT 'IDENTIFIED BY x'"),
    ],
)
def test_passwords_are_shown_as_secret(sent: str, shown: str) -> None:
    assert redacted(sent) == shown


def processlist_users(server: ServerProcess, **login: str) -> set[str]:
    connection = server.connect(**login)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW PROCESSLIST")
            return {row[1] for row in cursor.fetchall()}
    finally:
        connection.close()


def test_processlist_and_grants_of_others(server: ServerProcess) -> None:
    server.query("CREATE USER 'plain'@'%' IDENTIFIED BY 'p'")
    server.query("CREATE USER 'watcher'@'%' IDENTIFIED BY 'w'")
    server.query("GRANT PROCESS ON *.* TO 'watcher'@'%'")
    root = server.connect()  # a session of root's that the others may or may not see
    try:
        assert processlist_users(server, user="plain", password="p") == {"plain"}
        assert {"root", "watcher"} <= processlist_users(server, user="watcher", password="w")
        plain = server.connect(user="plain", password="p")
        with plain.cursor() as cursor:
            cursor.execute("SHOW GRANTS")  # one's own grants need nothing
            assert cursor.fetchall() == (("GRANT USAGE ON *.* TO `plain`@`%`",),)
            with pytest.raises(pymysql.MySQLError) as refused:
                cursor.execute("SHOW GRANTS FOR 'root'@'localhost'")
            assert refused.value.args == (
                1044,
                "Access denied for user 'plain'@'%' to database 'mysql'",
            )
        plain.close()
    finally:
        root.close()
