"""A small client of etcd's v3 JSON gateway (``/v3/kv/*``, ``/v3/lease/*``,
``/v3/watch``) over the standard library's ``http.client``.

Written by hand: etcd3gw's watch iterator hangs for ever once the server dies, and
``etcd3`` fails to import with current protobuf releases; the gateway's JSON API is
small. Keys and values travel base64-encoded, as the gateway wants them.

What holds: a unary call tries the endpoints in turn (the last one that answered first)
until one answers or ``deadline`` seconds pass, then raises :class:`EtcdError`; each thread
keeps its own persistent connection per endpoint. A watch is one streaming POST read
line by line with a read timeout, so a dead or silent etcd member shows as a timeout,
never as a hang.
"""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

Json = dict[str, Any]


class EtcdError(Exception):
    """No endpoint answered the call in time, or etcd refused it."""


def b64(data: bytes | str) -> str:
    """Base64 text of ``data`` (UTF-8 for text)."""
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode()


def unb64(text: str | None) -> bytes:
    """The bytes of base64 ``text`` (empty for None)."""
    return base64.b64decode(text) if text else b""


def prefix_end(prefix: bytes) -> bytes:
    """The range end that covers every key starting with ``prefix``."""
    return prefix[:-1] + bytes([prefix[-1] + 1])


class EtcdClient:
    """Calls to a set of etcd endpoints (``host:port`` client addresses)."""

    def __init__(self, endpoints: Sequence[str], call_timeout: float = 2.0) -> None:
        if not endpoints:
            raise EtcdError("no etcd endpoint given")
        self.endpoints = list(endpoints)
        self.call_timeout = call_timeout
        self._preferred = 0
        self._local = threading.local()

    def _connection(self, endpoint: str) -> http.client.HTTPConnection:
        pool: dict[str, http.client.HTTPConnection] = getattr(self._local, "pool", None) or {}
        self._local.pool = pool
        connection = pool.get(endpoint)
        if connection is None:
            host, port = endpoint.rsplit(":", 1)
            connection = http.client.HTTPConnection(host, int(port), timeout=self.call_timeout)
            pool[endpoint] = connection
        return connection

    def _drop(self, endpoint: str) -> None:
        pool = getattr(self._local, "pool", {})
        connection = pool.pop(endpoint, None)
        if connection is not None:
            connection.close()

    def call(self, path: str, body: Json, deadline: float) -> Json:
        """POST ``body`` to ``path`` on an endpoint that answers; its JSON answer."""
        give_up = time.monotonic() + deadline
        last = "no attempt"
        attempt = 0
        while True:
            index = (self._preferred + attempt) % len(self.endpoints)
            endpoint = self.endpoints[index]
            try:
                answer = self._post(endpoint, path, body)
                self._preferred = index
                return answer
            except (OSError, http.client.HTTPException, ValueError) as exc:
                self._drop(endpoint)
                last = f"{endpoint}: {exc}"
            except _Refused as exc:
                last = f"{endpoint}: {exc}"
                if not exc.retryable:
                    raise EtcdError(last) from exc
            attempt += 1
            if time.monotonic() >= give_up:
                raise EtcdError(f"etcd did not answer {path} in {deadline:g} s ({last})")
            if attempt % len(self.endpoints) == 0:
                time.sleep(0.05)

    def _post(self, endpoint: str, path: str, body: Json) -> Json:
        connection = self._connection(endpoint)
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        if response.status != 200:
            text = data.decode(errors="replace")[:200]
            raise _Refused(f"HTTP {response.status}: {text}", retryable=response.status >= 500)
        answer = json.loads(data or b"{}")
        if not isinstance(answer, dict):
            raise ValueError("etcd answered no JSON object")
        return answer

    # ---------------------------------------------------------------- kv
    def create(self, key: bytes, value: bytes, lease: int, deadline: float) -> tuple[bool, int]:
        """Put ``key`` only if absent (idempotent); (created now, revision)."""
        compare = [{"key": b64(key), "target": "CREATE", "create_revision": "0"}]
        put: Json = {"key": b64(key), "value": b64(value)}
        if lease:
            put["lease"] = str(lease)
        answer = self.call(
            "/v3/kv/txn",
            {"compare": compare, "success": [{"request_put": put}], "failure": []},
            deadline,
        )
        return bool(answer.get("succeeded")), int(answer["header"]["revision"])

    def put(self, key: bytes, value: bytes, deadline: float, lease: int = 0) -> int:
        """Put ``key``; the revision."""
        body: Json = {"key": b64(key), "value": b64(value)}
        if lease:
            body["lease"] = str(lease)
        return int(self.call("/v3/kv/put", body, deadline)["header"]["revision"])

    def range_prefix(
        self, prefix: bytes, deadline: float, revision: int = 0, keys_only: bool = False
    ) -> tuple[list[Json], int]:
        """The key-values under ``prefix`` (at ``revision``, 0: now); (kvs, revision)."""
        body: Json = {"key": b64(prefix), "range_end": b64(prefix_end(prefix))}
        if revision:
            body["revision"] = str(revision)
        if keys_only:
            body["keys_only"] = True
        answer = self.call("/v3/kv/range", body, deadline)
        return list(answer.get("kvs", [])), int(answer["header"]["revision"])

    def revision(self, deadline: float) -> int:
        """The cluster's revision now, read linearizably: etcd's leader confirms it still
        leads (a read index: one heartbeat round to a majority, nothing proposed, nothing
        written to disk), so the answer is at least the revision of every write that
        completed before this call. No majority: EtcdError after ``deadline``.
        """
        body: Json = {"key": b64(b"\0"), "count_only": True}
        return int(self.call("/v3/kv/range", body, deadline)["header"]["revision"])

    def delete(self, keys: Sequence[bytes], deadline: float) -> None:
        """Delete ``keys`` in one transaction."""
        if not keys:
            return
        ops = [{"request_delete_range": {"key": b64(k)}} for k in keys]
        self.call("/v3/kv/txn", {"compare": [], "success": ops, "failure": []}, deadline)

    def compact(self, revision: int, deadline: float) -> None:
        """Compact the history below ``revision``."""
        self.call("/v3/kv/compaction", {"revision": str(revision)}, deadline)

    # ------------------------------------------------------------- lease
    def grant(self, ttl: int, deadline: float) -> int:
        """A new lease of ``ttl`` seconds; its id."""
        return int(self.call("/v3/lease/grant", {"TTL": str(ttl)}, deadline)["ID"])

    def keepalive(self, lease: int, deadline: float) -> int:
        """Renew ``lease``; its TTL now (0 or less: it expired)."""
        answer = self.call("/v3/lease/keepalive", {"ID": str(lease)}, deadline)
        result = answer.get("result", answer)
        return int(result.get("TTL", 0))

    def time_to_live(self, lease: int, deadline: float) -> tuple[int, int]:
        """Seconds ``lease`` has left (-1: it expired) and the TTL it was granted with
        (each member grants its own, from its own expel timeout).
        """
        answer = self.call("/v3/lease/timetolive", {"ID": str(lease)}, deadline)
        return int(answer.get("TTL", -1)), int(answer.get("grantedTTL", 0))

    def revoke(self, lease: int, deadline: float) -> None:
        """End ``lease``: its keys are deleted."""
        self.call("/v3/lease/revoke", {"ID": str(lease)}, deadline)

    # ------------------------------------------------------------- watch
    def watch(
        self, endpoint: str, prefix: bytes, start: int, read_timeout: float
    ) -> Iterator[Json]:
        """The watch responses for ``prefix`` from revision ``start`` on, from one
        endpoint; ends (or raises OSError/EtcdError) when the stream breaks.
        """
        host, port = endpoint.rsplit(":", 1)
        connection = http.client.HTTPConnection(host, int(port), timeout=read_timeout)
        try:
            request = {
                "create_request": {
                    "key": b64(prefix),
                    "range_end": b64(prefix_end(prefix)),
                    "start_revision": str(start),
                    "progress_notify": True,
                }
            }
            connection.request(
                "POST",
                "/v3/watch",
                json.dumps(request),
                {"Content-Type": "application/json", "Grpc-Metadata-hasleader": "true"},
            )
            response = connection.getresponse()
            if response.status != 200:
                raise EtcdError(f"watch refused: HTTP {response.status}")
            while True:
                line = response.readline()
                if not line:
                    return
                if not line.strip():
                    continue
                message = json.loads(line)
                if "error" in message:
                    raise EtcdError(f"watch failed: {message['error']}")
                yield message.get("result", {})
        except TimeoutError as exc:
            raise EtcdError(f"watch on {endpoint} silent for {read_timeout:g} s") from exc
        finally:
            connection.close()


class _Refused(Exception):
    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable
