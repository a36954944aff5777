"""How the receiver takes an ERR packet that ends the source's event stream: 1236 stops
it with the error a replica shows (13114), a network error makes it reconnect, any other
error stops it with the source's code and message."""

from __future__ import annotations

import pytest

from rpl.core.errors import MySQLError
from rpl.core.net.responses import err_packet
from rpl.core.replication.receiver import ConnectionLost, source_error


def test_1236_stops_the_receiver_with_13114_and_the_source_message() -> None:
    error = source_error(err_packet(1236, "HY000", "Could not find first log file name"))
    assert isinstance(error, MySQLError) and error.errno == 13114
    assert "Could not find first log file name" in error.message


@pytest.mark.parametrize("code", [2013, 1053, 1159])
def test_a_network_error_is_a_lost_connection(code: int) -> None:
    error = source_error(err_packet(code, "08S01", "going away"))
    assert isinstance(error, ConnectionLost)
    assert (error.errno, error.message) == (code, "going away")


def test_another_error_stops_the_receiver_with_the_source_code() -> None:
    error = source_error(err_packet(1045, "28000", "Access denied for user 'repl'"))
    assert isinstance(error, MySQLError) and not isinstance(error, ConnectionLost)
    assert (error.errno, error.message) == (1045, "Access denied for user 'repl'")
