"""The listening side: accepts TCP connections and runs their handshakes without ever blocking on one.

A connection is handed to the caller only once it has answered the nonce with the right HMAC. Handshakes run
non-blocking with a deadline, so a silent or slow client cannot stall the connection being served; a client that
fails (wrong token, garbage, too large a frame, too slow) is told why where possible, closed and logged.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import select
import socket
import time
from typing import Any

from tfcli.errors import InvalidInput
from trainer.transport.codec import decode, encode
from trainer.transport.connection import (
    DEFAULT_MAX_FRAME,
    FRAME_LENGTH,
    HANDSHAKE_MAX_FRAME,
    NONCE_BYTES,
    PROTOCOL,
    TOKEN_VARIABLE,
    Connection,
    configure_socket,
    handshake_mac,
)
from trainer.transport.errors import ConnectionClosed, FrameError, TransportError

log = logging.getLogger(__name__)

MAX_PENDING = 32  # handshakes in progress at once; more connections are closed straight away
_READABLE = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address ("" and 0.0.0.0 mean every interface)."""
    if not host:
        return False
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def _frame(message: Any) -> bytes:
    parts = encode(message)
    return b"".join([FRAME_LENGTH.pack(sum(len(part) for part in parts)), *parts])


def _refuse(sock: socket.socket, reason: str) -> None:
    try:
        sock.setblocking(True)
        sock.settimeout(0.5)
        sock.sendall(_frame({"ok": False, "reason": reason}))
    except OSError:
        pass


class _Pending:
    """A client between accept and its handshake answer."""

    def __init__(self, sock: socket.socket, peer: str, deadline: float) -> None:
        self.sock = sock
        self.peer = peer
        self.deadline = deadline
        self.nonce = os.urandom(NONCE_BYTES)
        self.rx = bytearray()

    def feed(self) -> Any | None:
        """Read what arrived; the decoded answer once it is complete, None while incomplete."""
        try:
            chunk = self.sock.recv(HANDSHAKE_MAX_FRAME)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as error:
            raise TransportError(str(error)) from None
        if not chunk:
            raise ConnectionClosed("closed during the handshake")
        self.rx += chunk
        if len(self.rx) < FRAME_LENGTH.size:
            return None
        (size,) = FRAME_LENGTH.unpack_from(self.rx)
        if size > HANDSHAKE_MAX_FRAME:
            raise FrameError(f"a handshake frame of {size} bytes (at most {HANDSHAKE_MAX_FRAME})")
        if len(self.rx) < FRAME_LENGTH.size + size:
            return None
        if len(self.rx) > FRAME_LENGTH.size + size:
            raise FrameError("data before the handshake was accepted")
        return decode(memoryview(self.rx)[FRAME_LENGTH.size :])


class Server:
    """Listen on ``host:port``; :meth:`poll` hands out authenticated connections.

    Without a token only a loopback address may be used (InvalidInput otherwise: anyone who can reach the port
    could drive the environment).
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        token: str | None,
        max_frame: int = DEFAULT_MAX_FRAME,
        io_timeout: float | None = 60.0,
        handshake_timeout: float = 5.0,
    ) -> None:
        if token is None and not is_loopback(host):
            raise InvalidInput(
                f"env-worker: refusing to listen on {host or 'every interface'}:{port} without a token: set "
                f"{TOKEN_VARIABLE} (the same on the learner and every env-worker) or listen on 127.0.0.1"
            )
        self._token = token
        self._max_frame = max_frame
        self._io_timeout = io_timeout
        self._handshake_timeout = handshake_timeout
        try:
            family = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
            self._listener = socket.create_server((host, port), family=family, backlog=64)
        except OSError as error:
            raise InvalidInput(f"env-worker: cannot listen on {host}:{port}: {error}") from None
        self._listener.setblocking(False)
        self.address: tuple[str, int] = (host, self._listener.getsockname()[1])
        self._poller = select.poll()
        self._poller.register(self._listener, select.POLLIN)
        self._pending: dict[int, _Pending] = {}
        self._watched: int | None = None  # fd of the served connection registered with the poller

    def poll(self, active: Connection | None, timeout: float | None) -> tuple[list[Connection], bool]:
        """Wait up to ``timeout`` seconds (None: for ever) for a request on ``active`` or a new client.

        Returns the connections that completed their handshake meanwhile and whether ``active`` has data to read
        (or was closed by its peer: the read will tell).
        """
        fd = active.fileno() if active is not None else None
        if fd != self._watched:
            if self._watched is not None:
                self._poller.unregister(self._watched)
            if fd is not None:
                self._poller.register(fd, _READABLE)
            self._watched = fd
        if active is not None and active.buffered():
            timeout = 0.0
        now = time.monotonic()
        if self._pending:
            nearest = max(0.0, min(p.deadline for p in self._pending.values()) - now)
            timeout = nearest if timeout is None else min(timeout, nearest)
        events = self._poller.poll(None if timeout is None else int(timeout * 1000 + 0.999))
        accepted: list[Connection] = []
        readable = active is not None and active.buffered()
        for event_fd, _ in events:
            if event_fd == self._watched:
                readable = True
            elif event_fd == self._listener.fileno():
                self._accept()
            elif (pending := self._pending.get(event_fd)) is not None:
                connection = self._continue(pending)
                if connection is not None:
                    accepted.append(connection)
        now = time.monotonic()
        for pending in [p for p in self._pending.values() if p.deadline <= now]:
            self._drop(pending, f"no handshake answer within {self._handshake_timeout}s", tell=True)
        return accepted, readable

    def _accept(self) -> None:
        while True:
            try:
                sock, address = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:  # e.g. out of file descriptors: keep serving what we have
                log.warning("env-worker: accept failed: %s", error)
                return
            peer = f"{address[0]}:{address[1]}"
            if len(self._pending) >= MAX_PENDING:
                log.warning("refused connection from %s: too many handshakes in progress", peer)
                sock.close()
                continue
            try:
                configure_socket(sock)
                sock.settimeout(self._handshake_timeout)
                pending = _Pending(sock, peer, time.monotonic() + self._handshake_timeout)
                sock.sendall(_frame({"protocol": PROTOCOL, "nonce": pending.nonce}))
                sock.setblocking(False)
            except OSError as error:
                log.warning("refused connection from %s: %s", peer, error)
                sock.close()
                continue
            self._pending[sock.fileno()] = pending
            self._poller.register(sock, select.POLLIN)

    def _continue(self, pending: _Pending) -> Connection | None:
        try:
            answer = pending.feed()
        except ConnectionClosed:  # a TCP probe (Kubernetes, a port scan) or a client that gave up: not news
            log.info("connection from %s closed before its handshake", pending.peer)
            self._forget(pending)
            pending.sock.close()
            return None
        except TransportError as error:
            self._drop(pending, f"bad handshake: {error}", tell=isinstance(error, FrameError))
            return None
        if answer is None:
            return None
        mac = answer.get("mac") if isinstance(answer, dict) else None
        expected = handshake_mac(self._token, pending.nonce)
        if not isinstance(mac, bytes) or not hmac.compare_digest(mac, expected):
            self._drop(pending, f"authentication failed (wrong or missing {TOKEN_VARIABLE})", tell=True)
            return None
        self._forget(pending)
        sock = pending.sock
        try:
            sock.settimeout(self._handshake_timeout)
            sock.sendall(_frame({"ok": True}))
            sock.settimeout(self._io_timeout)
        except OSError as error:
            log.warning("lost %s right after its handshake: %s", pending.peer, error)
            sock.close()
            return None
        return Connection(sock, peer=pending.peer, max_frame=self._max_frame, timeout=self._io_timeout)

    def _forget(self, pending: _Pending) -> None:
        fd = pending.sock.fileno()
        self._pending.pop(fd, None)
        self._poller.unregister(fd)

    def _drop(self, pending: _Pending, reason: str, *, tell: bool) -> None:
        log.warning("refused connection from %s: %s", pending.peer, reason)
        self._forget(pending)
        if tell:
            _refuse(pending.sock, reason)
        pending.sock.close()

    def close(self) -> None:
        """Stop listening and drop handshakes in progress (connections handed out are the caller's)."""
        for pending in list(self._pending.values()):
            self._forget(pending)
            pending.sock.close()
        self._listener.close()
