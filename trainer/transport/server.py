"""The listening side: hands out authenticated connections and never waits on a client that is not one.

The handshakes run on their own thread (:mod:`trainer.transport.handshake`: per-address and total limits that
evict the oldest, a short deadline), which passes each authenticated connection here through a queue and wakes
:meth:`Server.poll` with a byte on a socket pair. The serving loop therefore only ever waits on its learner and
on that wake-up: a silent, slow or flooding stranger cannot stall it or take the learner's place.
"""

from __future__ import annotations

import contextlib
import ipaddress
import select
import socket
import threading
import time
from collections import deque

from trainer.kernel.errors import InvalidInput
from trainer.transport.connection import DEFAULT_MAX_FRAME, TOKEN_VARIABLE, Connection
from trainer.transport.handshake import HANDSHAKE_TIMEOUT, MAX_PENDING, MAX_PENDING_PER_PEER, Handshaker

MESSAGE_TIMEOUT = 10.0  # seconds a whole message may take once under way (plus one per MiB), see Connection
_MAX_WAITING = 4  # authenticated connections not yet taken by poll; each replaces the one before anyway
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
        message_timeout: float | None = MESSAGE_TIMEOUT,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        max_pending: int = MAX_PENDING,
        max_pending_per_peer: int = MAX_PENDING_PER_PEER,
    ) -> None:
        if token is None and not is_loopback(host):
            raise InvalidInput(
                f"env-worker: refusing to listen on {host or 'every interface'}:{port} without a token: set "
                f"{TOKEN_VARIABLE} (the same on the learner and every env-worker) or listen on 127.0.0.1"
            )
        try:
            family = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
            self._listener = socket.create_server((host, port), family=family, backlog=128)
        except OSError as error:
            raise InvalidInput(f"env-worker: cannot listen on {host}:{port}: {error}") from None
        self._listener.setblocking(False)
        self.address: tuple[str, int] = (host, self._listener.getsockname()[1])
        self._waiting: deque[Connection] = deque()
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._poller = select.poll()
        self._poller.register(self._wake_r, select.POLLIN)
        self._watched: int | None = None  # fd of the served connection registered with the poller
        self._handshaker = Handshaker(
            self._listener,
            self._deliver,
            token=token,
            max_frame=max_frame,
            io_timeout=io_timeout,
            message_timeout=message_timeout,
            timeout=handshake_timeout,
            max_pending=max_pending,
            max_pending_per_peer=max_pending_per_peer,
        )

    def _deliver(self, connection: Connection) -> None:
        """From the handshake thread: queue an authenticated connection and wake :meth:`poll`."""
        with self._lock:
            self._waiting.append(connection)
            stale = [self._waiting.popleft() for _ in range(len(self._waiting) - _MAX_WAITING)]
        for old in stale:
            old.close()
        with contextlib.suppress(BlockingIOError):  # a full pair already holds a wake-up
            self._wake_w.send(b"x")

    def poll(self, active: Connection | None, timeout: float | None) -> tuple[list[Connection], bool]:
        """Wait up to ``timeout`` seconds (None: for ever) for a request on ``active`` or a new client.

        Returns the connections that completed their handshake meanwhile and whether ``active`` needs reading:
        it has data (or was closed by its peer: the read will tell), holds a whole frame already, or its message
        under way is past its deadline (:meth:`Connection.try_recv` raises then).
        """
        fd = active.fileno() if active is not None else None
        if fd != self._watched:
            if self._watched is not None:
                self._poller.unregister(self._watched)
            if fd is not None:
                self._poller.register(fd, _READABLE)
            self._watched = fd
        deadline = active.frame_deadline() if active is not None else None
        if active is not None and active.has_frame():
            timeout = 0.0
        elif deadline is not None:
            left = max(0.0, deadline - time.monotonic())
            timeout = left if timeout is None else min(timeout, left)
        events = self._poller.poll(None if timeout is None else int(timeout * 1000 + 0.999))
        readable = active is not None and active.has_frame()
        for event_fd, _ in events:
            if event_fd == self._watched:
                readable = True
            elif event_fd == self._wake_r.fileno():
                with contextlib.suppress(BlockingIOError):
                    self._wake_r.recv(4096)
        if deadline is not None and time.monotonic() >= deadline:
            readable = True
        with self._lock:
            accepted = list(self._waiting)
            self._waiting.clear()
        return accepted, readable

    def close(self) -> None:
        """Stop listening and drop handshakes in progress (connections handed out are the caller's)."""
        self._handshaker.close()
        self._listener.close()
        with self._lock:
            waiting = list(self._waiting)
            self._waiting.clear()
        for connection in waiting:
            connection.close()
        self._wake_r.close()
        self._wake_w.close()
