"""Connection phase: handshake v10, HandshakeResponse41, mysql_native_password, auth switch.

The server advertises ``mysql_native_password``. A client that answers with that
plugin and a 20-byte token is checked at once; one that names another plugin
(``caching_sha2_password`` from MySQL 8 libraries) or sends no token for a user
with a password gets an AuthSwitchRequest (0xFE, plugin name, the scramble + NUL)
and answers with the token for the same scramble.

Stored password hashes are MySQL's: ``*`` + upper-case hex of SHA1(SHA1(password)).
The client token is SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))), so
the server recovers SHA1(password) from the token and checks its SHA1 against the
stored hash, never knowing the password.
"""

from __future__ import annotations

import hashlib
import os
import struct

import attrs

from rpl.core.net.packets import PayloadReader

NATIVE_PASSWORD = "mysql_native_password"

CLIENT_LONG_PASSWORD = 0x00000001
CLIENT_FOUND_ROWS = 0x00000002
CLIENT_LONG_FLAG = 0x00000004
CLIENT_CONNECT_WITH_DB = 0x00000008
CLIENT_NO_SCHEMA = 0x00000010
CLIENT_ODBC = 0x00000040
CLIENT_IGNORE_SPACE = 0x00000100
CLIENT_PROTOCOL_41 = 0x00000200
CLIENT_INTERACTIVE = 0x00000400
CLIENT_IGNORE_SIGPIPE = 0x00001000
CLIENT_TRANSACTIONS = 0x00002000
CLIENT_RESERVED = 0x00004000
CLIENT_SECURE_CONNECTION = 0x00008000
CLIENT_MULTI_RESULTS = 0x00020000
CLIENT_PS_MULTI_RESULTS = 0x00040000
CLIENT_PLUGIN_AUTH = 0x00080000
CLIENT_CONNECT_ATTRS = 0x00100000
CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 0x00200000
CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS = 0x00400000

SERVER_CAPABILITIES = (
    CLIENT_LONG_PASSWORD
    | CLIENT_FOUND_ROWS
    | CLIENT_LONG_FLAG
    | CLIENT_CONNECT_WITH_DB
    | CLIENT_NO_SCHEMA
    | CLIENT_ODBC
    | CLIENT_IGNORE_SPACE
    | CLIENT_PROTOCOL_41
    | CLIENT_INTERACTIVE
    | CLIENT_IGNORE_SIGPIPE
    | CLIENT_TRANSACTIONS
    | CLIENT_RESERVED
    | CLIENT_SECURE_CONNECTION
    | CLIENT_MULTI_RESULTS
    | CLIENT_PS_MULTI_RESULTS
    | CLIENT_PLUGIN_AUTH
    | CLIENT_CONNECT_ATTRS
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
    | CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS
)
"""What rpl supports: no TLS, no compression, no multi-statements, no deprecated EOF."""


def new_scramble() -> bytes:
    """20 random bytes with no NUL (clients treat the scramble as a C string)."""
    return bytes(b % 255 + 1 for b in os.urandom(20))


def password_hash(password: str) -> str:
    """MySQL's stored form of a native password ('' for an empty password)."""
    if not password:
        return ""
    stage2 = hashlib.sha1(hashlib.sha1(password.encode()).digest()).digest()
    return "*" + stage2.hex().upper()


def client_token(password: str, scramble: bytes) -> bytes:
    """The token a client computes (used by tests and the replica's own checks)."""
    if not password:
        return b""
    stage1 = hashlib.sha1(password.encode()).digest()
    stage2 = hashlib.sha1(stage1).digest()
    mask = hashlib.sha1(scramble + stage2).digest()
    return bytes(a ^ b for a, b in zip(stage1, mask, strict=True))


def check_token(stored_hash: str, scramble: bytes, token: bytes) -> bool:
    """True when ``token`` proves knowledge of the password behind ``stored_hash``."""
    if not stored_hash:
        return token == b""
    if len(token) != 20 or not stored_hash.startswith("*"):
        return False
    stage2 = bytes.fromhex(stored_hash[1:])
    mask = hashlib.sha1(scramble + stage2).digest()
    stage1 = bytes(a ^ b for a, b in zip(token, mask, strict=True))
    return hashlib.sha1(stage1).digest() == stage2


def handshake_v10(server_version: str, connection_id: int, scramble: bytes, status: int) -> bytes:
    """The server's initial handshake packet."""
    capabilities = SERVER_CAPABILITIES
    return b"".join(
        (
            b"\x0a",
            server_version.encode(),
            b"\0",
            struct.pack("<I", connection_id),
            scramble[:8],
            b"\0",
            struct.pack("<H", capabilities & 0xFFFF),
            bytes((255,)),
            struct.pack("<H", status),
            struct.pack("<H", capabilities >> 16),
            bytes((21,)),
            b"\0" * 10,
            scramble[8:],
            b"\0",
            NATIVE_PASSWORD.encode(),
            b"\0",
        )
    )


@attrs.frozen
class HandshakeResponse:
    """What the client sent in HandshakeResponse41."""

    capabilities: int
    max_packet: int
    charset: int
    user: str
    auth_response: bytes
    database: str | None
    auth_plugin: str
    attributes: dict[str, str]


def parse_handshake_response(payload: bytes) -> HandshakeResponse:
    """Decode HandshakeResponse41; ProtocolError/ValueError when it is malformed."""
    reader = PayloadReader(payload)
    capabilities = reader.uint(4)
    max_packet = reader.uint(4)
    charset = reader.uint(1)
    reader.take(23)
    user = reader.nul_str().decode("utf-8", "replace")
    if capabilities & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
        auth = reader.lenenc_str()
    elif capabilities & CLIENT_SECURE_CONNECTION:
        auth = reader.take(reader.uint(1))
    else:
        auth = reader.nul_str()
    database = None
    if capabilities & CLIENT_CONNECT_WITH_DB and reader.remaining():
        database = reader.nul_str().decode("utf-8", "replace") or None
    plugin = NATIVE_PASSWORD
    if capabilities & CLIENT_PLUGIN_AUTH and reader.remaining():
        plugin = reader.nul_str().decode("ascii", "replace")
    attributes: dict[str, str] = {}
    if capabilities & CLIENT_CONNECT_ATTRS and reader.remaining():
        block = PayloadReader(reader.lenenc_str())
        while block.remaining():
            key = block.lenenc_str().decode("utf-8", "replace")
            attributes[key] = block.lenenc_str().decode("utf-8", "replace")
    return HandshakeResponse(
        capabilities, max_packet, charset, user, auth, database, plugin, attributes
    )


def auth_switch_request(scramble: bytes) -> bytes:
    """AuthSwitchRequest asking for mysql_native_password over ``scramble``."""
    return b"\xfe" + NATIVE_PASSWORD.encode() + b"\0" + scramble + b"\0"
