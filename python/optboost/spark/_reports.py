"""How the ranks hand their results to the driver: each connects to a small TCP listener the
driver opens for the fit and sends one signed JSON message (the model of its last finished
iteration, how training ended, its warnings), waiting for the driver's acknowledgement before
its Spark task returns.

Not through the barrier job's own results: when one task of a barrier stage fails (its
executor killed), Spark fails the stage and stops the others, so the survivors' models (the
finished iterations) would be lost with them. A survivor of a lost peer learns it from the
core within its timeout and reports before Spark stops it.

A message is ``length (8 bytes, big-endian) · JSON · HMAC-SHA256(key, JSON)``; the key is
random per fit and reaches the executors inside the job's closure only. A message whose
signature, size or content is not right is dropped unread; nothing in one is imported, called
or unpickled (the model inside is a model file's dict, checked again when loaded).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import socket
import threading
import time
from typing import Any

from ..errors import TrainingError

# At most this many bytes in one rank's message (a model file with its trees).
MAX_MESSAGE_BYTES = 1 << 31
# Connections served at once beyond one per rank (the listener is open to the network).
SPARE_CONNECTIONS = 8
SIGNATURE_BYTES = 32
KEY_BYTES = 32


class ReportKey:
    """The fit's signing key: hidden from every text of it (Spark may log a task's closure
    on failure), sent to the executors only inside the job's closure."""

    __slots__ = ("_value",)

    def __init__(self, value: bytes):
        self._value = bytes(value)

    @classmethod
    def generate(cls) -> ReportKey:
        return cls(secrets.token_bytes(KEY_BYTES))

    def sign(self, payload: bytes) -> bytes:
        return hmac.new(self._value, payload, hashlib.sha256).digest()

    def __repr__(self) -> str:
        return "ReportKey(<hidden>)"

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return (ReportKey, (self._value,))


def send_report(
    address: tuple[str, int], key: ReportKey, message: dict[str, Any], timeout: float
) -> None:
    """One rank's message to the driver, acknowledged (raises TrainingError if not)."""
    payload = json.dumps(message, allow_nan=False).encode()
    if len(payload) > MAX_MESSAGE_BYTES:
        raise TrainingError(f"the rank's result is {len(payload)} bytes, over {MAX_MESSAGE_BYTES}")
    try:
        with socket.create_connection(address, timeout=timeout) as connection:
            connection.sendall(len(payload).to_bytes(8, "big") + payload + key.sign(payload))
            if connection.recv(1) != b"\x01":
                raise OSError("the driver closed the connection without acknowledging")
    except OSError as error:
        raise TrainingError(
            f"could not hand the rank's result to the driver at {address[0]}:{address[1]} "
            f"({type(error).__name__}: {error})"
        ) from None


class ReportServer:
    """The driver's listener for one fit: keeps the first valid message of each rank."""

    def __init__(
        self, bind: str, host: str, key: ReportKey, fit_id: str, world: int, timeout: float
    ):
        self.key = key
        self._fit_id = fit_id
        self._world = world
        self._timeout = timeout
        self._reports: dict[int, dict[str, Any]] = {}
        self._changed = threading.Condition()
        self._slots = threading.BoundedSemaphore(world + SPARE_CONNECTIONS)
        self._closed = False
        self._server = socket.create_server((bind, 0))
        self._server.settimeout(0.5)
        self.address = (host, self._server.getsockname()[1])
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def reports(self) -> dict[int, dict[str, Any]]:
        with self._changed:
            return dict(self._reports)

    def wait_for(self, ranks: set[int], deadline: float) -> dict[int, dict[str, Any]]:
        """The reports once every rank of ``ranks`` has sent one, or at the deadline."""
        with self._changed:
            while not ranks <= set(self._reports) and time.monotonic() < deadline:
                self._changed.wait(max(0.0, min(0.5, deadline - time.monotonic())))
            return dict(self._reports)

    def close(self) -> None:
        self._closed = True
        self._thread.join(timeout=5)
        self._server.close()

    def _serve(self) -> None:
        while not self._closed:
            try:
                connection, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                connection.close()  # more at once than the ranks need: not theirs
                continue
            threading.Thread(target=self._receive, args=(connection,), daemon=True).start()

    def _receive(self, connection: socket.socket) -> None:
        try:
            with connection:
                connection.settimeout(self._timeout)
                size = int.from_bytes(_exactly(connection, 8), "big")
                if size > MAX_MESSAGE_BYTES:
                    return
                payload = _exactly(connection, size)
                signature = _exactly(connection, SIGNATURE_BYTES)
                if not hmac.compare_digest(signature, self.key.sign(payload)):
                    return
                message = json.loads(payload)
                rank = message.get("rank") if isinstance(message, dict) else None
                if (
                    message.get("fit") != self._fit_id
                    or isinstance(rank, bool)
                    or not isinstance(rank, int)
                    or not 0 <= rank < self._world
                ):
                    return
                with self._changed:
                    self._reports.setdefault(rank, message)
                    self._changed.notify_all()
                connection.sendall(b"\x01")
        except (OSError, ValueError):
            return  # a peer that stalls, closes early or sends bad JSON: dropped
        finally:
            self._slots.release()


def _exactly(connection: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = connection.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            raise OSError("connection closed early")
        chunks += chunk
    return bytes(chunks)
