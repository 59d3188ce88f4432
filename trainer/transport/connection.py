"""One authenticated TCP connection carrying length-prefixed frames, and the client side of the handshake.

On the wire a frame is ``u32 N`` (big-endian) followed by an N-byte body (see :mod:`trainer.transport.codec`).
A receiver refuses a frame larger than its ``max_frame`` before reading it; every read and write has a timeout;
Nagle is off (requests and replies are small and latency-bound).

The handshake, right after the TCP connection is made::

    server -> client   {"protocol": "tfcli-env/1", "nonce": 32 random bytes}
    client -> server   {"mac": HMAC-SHA256(key=TRAINER_TOKEN, msg=nonce)}
    server -> client   {"ok": true}                       or  {"ok": false, "reason": ...} and close

Handshake frames are limited to 4 KiB, so an unauthenticated peer cannot make the server allocate more. Without
a token the key is empty, which only a server listening on loopback accepts (see :mod:`trainer.transport.server`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import socket
import struct
import time
from typing import Any

from trainer.transport.codec import decode, encode
from trainer.transport.errors import ConnectionClosed, FrameError, HandshakeRefused, TransportError

PROTOCOL = "tfcli-env/1"
TOKEN_VARIABLE = "TRAINER_TOKEN"
DEFAULT_MAX_FRAME = 64 * 2**20  # an Atari frame is ~100 KB, a stacked 84x84x4 state ~28 KB
HANDSHAKE_MAX_FRAME = 4096
NONCE_BYTES = 32

# Every frame starts with its body length (u32, big-endian); the server reads the same framing without blocking.
FRAME_LENGTH = struct.Struct(">I")
SECONDS_PER_MIB = 1.0  # what a message's deadline grows by per MiB: a big frame may take longer than a small one
_CHUNK = 65536  # one read pulls in a whole small frame; larger ones are read straight into their own buffer


def token_from_environment() -> str | None:
    """The shared token from ``TRAINER_TOKEN`` (a Kubernetes Secret on GKE); None when unset or empty."""
    return os.environ.get(TOKEN_VARIABLE) or None


def handshake_mac(token: str | None, nonce: bytes) -> bytes:
    """The client's answer to the server's nonce: HMAC-SHA256 keyed with the token (empty key without one)."""
    return hmac.new((token or "").encode(), nonce, hashlib.sha256).digest()


def configure_socket(sock: socket.socket) -> None:
    """TCP_NODELAY, and keepalive probes so that a peer that vanished without a FIN is noticed."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (("TCP_KEEPIDLE", 30), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3)):
        if hasattr(socket, option):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)


class Connection:
    """Frames over one socket: ``send(message)`` and ``recv() -> message``.

    Any failure — the peer closed, a timeout, a malformed or oversized frame — raises a
    :class:`~trainer.transport.errors.TransportError` subclass; after that the connection must be closed, since the
    byte stream may be out of step.
    """

    def __init__(
        self, sock: socket.socket, *, peer: str, max_frame: int = DEFAULT_MAX_FRAME, timeout: float | None = 30.0
    ) -> None:
        self.peer = peer
        self.max_frame = max_frame
        self._sock = sock
        self._rx = bytearray()  # bytes read past the last frame
        self._scratch = bytearray(_CHUNK)
        self._frame_started: float | None = None  # when the first byte of the frame in _rx arrived (try_recv)
        self.timeout = timeout
        # Seconds one whole message may take to send, or to arrive once its first byte has (try_recv), plus
        # SECONDS_PER_MIB per MiB; None: only ``timeout``. A per-message deadline rather than a per-read one:
        # a peer that trickles a byte now and then would reset a per-read timeout for ever.
        self.message_timeout: float | None = None

    @property
    def timeout(self) -> float | None:
        """Seconds any single read or write may take (None: no limit)."""
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: float | None) -> None:
        self._timeout = seconds
        self._sock.settimeout(seconds)

    def fileno(self) -> int:
        return self._sock.fileno()

    def _pending_size(self) -> int | None:
        """The body length of the frame at the head of the buffer, None before its length has arrived."""
        if len(self._rx) < FRAME_LENGTH.size:
            return None
        size: int = FRAME_LENGTH.unpack_from(self._rx)[0]
        return size

    def has_frame(self) -> bool:
        """Whether a whole frame (or an oversized length, which the next read refuses) is already buffered, so
        that waiting on the socket would be wrong."""
        size = self._pending_size()
        return size is not None and (size > self.max_frame or len(self._rx) >= FRAME_LENGTH.size + size)

    def _message_seconds(self, size: int) -> float | None:
        if self.message_timeout is None:
            return self._timeout
        return self.message_timeout + SECONDS_PER_MIB * size / 2**20

    def frame_deadline(self) -> float | None:
        """When the frame under way (some of it read by :meth:`try_recv`) must be whole; None when none is."""
        if self._frame_started is None:
            return None
        seconds = self._message_seconds(self._pending_size() or 0)
        return None if seconds is None else self._frame_started + seconds

    def send(self, message: Any) -> None:
        """Send one message; a message over ``max_frame`` raises FrameError and sends nothing."""
        try:
            parts = encode(message)
        except TypeError as error:
            raise FrameError(str(error)) from None
        size = sum(len(part) for part in parts)
        if size > self.max_frame:
            raise FrameError(f"a message of {size} bytes is over the {self.max_frame}-byte frame limit")
        try:
            if self.message_timeout is not None:  # the whole message (sendall's timeout is a total since 3.5)
                self._sock.settimeout(self._message_seconds(size))
            if size < _CHUNK:
                self._sock.sendall(b"".join([FRAME_LENGTH.pack(size), *parts]))
            else:  # large arrays go out from their own memory, uncopied
                self._sock.sendall(FRAME_LENGTH.pack(size))
                for part in parts:
                    self._sock.sendall(part)
        except TimeoutError:
            seconds = self._message_seconds(size)
            raise TransportError(f"{self.peer}: sending {size} bytes took over {seconds:g}s") from None
        except OSError as error:
            raise TransportError(f"{self.peer}: send failed: {error}") from None
        finally:
            if self.message_timeout is not None:
                self._sock.settimeout(self._timeout)

    def _read_some(self) -> None:
        got = self._sock.recv_into(self._scratch)
        if not got:
            raise ConnectionClosed(f"{self.peer}: connection closed")
        self._rx += memoryview(self._scratch)[:got]

    def recv(self) -> Any:
        """The next message (waits up to ``timeout`` for each read)."""
        try:
            while len(self._rx) < FRAME_LENGTH.size:
                self._read_some()
            (size,) = FRAME_LENGTH.unpack_from(self._rx)
            if size > self.max_frame:
                raise FrameError(f"{self.peer}: a frame of {size} bytes is over the {self.max_frame}-byte limit")
            body = bytearray(size)
            view = memoryview(body)
            have = min(size, len(self._rx) - FRAME_LENGTH.size)
            view[:have] = memoryview(self._rx)[FRAME_LENGTH.size : FRAME_LENGTH.size + have]
            del self._rx[: FRAME_LENGTH.size + have]
            while have < size:
                got = self._sock.recv_into(view[have:])
                if not got:
                    raise ConnectionClosed(f"{self.peer}: connection closed in the middle of a frame")
                have += got
            self._frame_started = time.monotonic() if self._rx else None
        except TimeoutError:
            raise TransportError(f"{self.peer}: no answer within {self.timeout}s") from None
        except TransportError:
            raise
        except OSError as error:
            raise TransportError(f"{self.peer}: {error}") from None
        return decode(view)

    def try_recv(self) -> tuple[Any] | None:
        """The next message as ``(message,)`` if it is all here, else None: reads what has arrived, never waits.

        For a server that must not wait on one peer (the env-worker's loop, woken by :meth:`Server.poll`). A frame
        must be whole within ``message_timeout`` (plus its size's allowance) of its first byte, else
        TransportError: a peer stalling mid-frame loses its connection, the server none of its time.
        """
        try:
            self._sock.settimeout(0.0)
            try:
                while not self.has_frame():
                    try:
                        got = self._sock.recv_into(self._scratch)
                    except (BlockingIOError, InterruptedError):
                        break
                    if not got:
                        raise ConnectionClosed(f"{self.peer}: connection closed")
                    if not self._rx:
                        self._frame_started = time.monotonic()
                    self._rx += memoryview(self._scratch)[:got]
            finally:
                self._sock.settimeout(self._timeout)
        except TransportError:
            raise
        except OSError as error:
            raise TransportError(f"{self.peer}: {error}") from None
        size = self._pending_size()
        if size is not None and size > self.max_frame:
            raise FrameError(f"{self.peer}: a frame of {size} bytes is over the {self.max_frame}-byte limit")
        if size is None or len(self._rx) < FRAME_LENGTH.size + size:
            deadline = self.frame_deadline()
            if deadline is not None and time.monotonic() >= deadline:
                got = len(self._rx) - FRAME_LENGTH.size
                raise TransportError(
                    f"{self.peer}: a message stalled ({max(got, 0)} of {size if size is not None else '?'} bytes "
                    f"after {self._message_seconds(size or 0):g}s)"
                )
            return None
        body = self._rx[FRAME_LENGTH.size : FRAME_LENGTH.size + size]  # a copy: the arrays decode over it
        del self._rx[: FRAME_LENGTH.size + size]
        self._frame_started = time.monotonic() if self._rx else None
        return (decode(body),)

    def close(self) -> None:
        """Close the socket (idempotent)."""
        with contextlib.suppress(OSError):
            self._sock.close()


def connect(
    host: str,
    port: int,
    *,
    token: str | None,
    connect_timeout: float = 5.0,
    io_timeout: float | None = 60.0,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Connection:
    """Connect to a server and pass its handshake; raises HandshakeRefused or TransportError."""
    peer = f"{host}:{port}"
    try:
        sock = socket.create_connection((host, port), timeout=connect_timeout)
    except TimeoutError:
        raise TransportError(f"{peer}: connect timed out after {connect_timeout}s") from None
    except OSError as error:
        raise TransportError(f"{peer}: cannot connect: {error}") from None
    try:
        configure_socket(sock)
        connection = Connection(sock, peer=peer, max_frame=HANDSHAKE_MAX_FRAME, timeout=connect_timeout)
        greeting = connection.recv()
        if not (
            isinstance(greeting, dict)
            and greeting.get("protocol") == PROTOCOL
            and isinstance(greeting.get("nonce"), bytes)
            and len(greeting["nonce"]) == NONCE_BYTES
        ):
            raise HandshakeRefused(f"{peer}: not a tfcli env-worker speaking {PROTOCOL}")
        connection.send({"mac": handshake_mac(token, greeting["nonce"])})
        try:
            verdict = connection.recv()
        except ConnectionClosed:
            verdict = {}
        if not (isinstance(verdict, dict) and verdict.get("ok") is True):
            reason = verdict.get("reason", "connection closed") if isinstance(verdict, dict) else "bad answer"
            raise HandshakeRefused(
                f"{peer} refused the handshake ({reason}): the learner and the env-workers need the same "
                f"{TOKEN_VARIABLE}"
            )
    except BaseException:
        sock.close()
        raise
    connection.max_frame = max_frame
    connection.timeout = io_timeout
    return connection
