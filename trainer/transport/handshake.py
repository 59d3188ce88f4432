"""The handshakes, on a thread of their own, so that no unauthenticated client can keep a worker from its learner.

Anyone who can reach the port can open connections (in a pod the worker listens on every interface), so before
the HMAC answer nothing a client does may cost the serving loop time or take the learner's place:

- the thread accepts and runs every handshake without blocking (one poll loop, non-blocking sends of frames that
  fit an empty socket buffer), so the serving loop never waits on a client that has not authenticated;
- each handshake must be answered within a short deadline (2 s by default; the learner answers in milliseconds);
- at most ``MAX_PENDING_PER_PEER`` handshakes per source address and ``MAX_PENDING`` in all are kept. When a limit
  is reached the *oldest* handshake of the address holding the most is dropped, never the newcomer: refusing
  newcomers (as a plain "too many pending" limit does) lets 32 silent sockets lock the learner out until they
  time out, and again as soon as they are reopened. Evicting the oldest of the busiest address means flooding
  from one address only ever costs that address's own handshakes; the learner, one handshake from its own
  address, is the last to go, and even sharing an address with a flood it is dropped only if the flood opens
  ``MAX_PENDING_PER_PEER`` connections within the learner's round trip.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import select
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from trainer.transport.codec import decode, encode
from trainer.transport.connection import (
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

MAX_PENDING = 64  # handshakes in progress at once, all addresses together
MAX_PENDING_PER_PEER = 8  # ... and from one source address
HANDSHAKE_TIMEOUT = 2.0  # seconds from accept to a correct answer
_READABLE = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR
_QUIET = 5.0  # seconds between two warnings about evicted handshakes (a flood must not flood the log too)


def frame(message: Any) -> bytes:
    parts = encode(message)
    return b"".join([FRAME_LENGTH.pack(sum(len(part) for part in parts)), *parts])


def _send_nowait(sock: socket.socket, data: bytes) -> None:
    """Send a handshake frame without waiting: it fits the empty send buffer of a fresh connection, and a peer
    that does not read must not block the thread (what does not go out now is lost: the peer is refused anyway)."""
    sent = sock.send(data, socket.MSG_DONTWAIT)
    if sent != len(data):
        raise TransportError(f"only {sent} of {len(data)} bytes of a handshake frame went out")


class _Pending:
    """A client between accept and its handshake answer."""

    def __init__(self, sock: socket.socket, host: str, peer: str, deadline: float) -> None:
        self.sock = sock
        self.host = host  # the source address, which the per-peer limit counts
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


class Handshaker:
    """Accepts on ``listener`` and authenticates clients in a daemon thread; ``deliver(connection)`` gets each
    client that answered the nonce with the right HMAC (called from that thread)."""

    def __init__(
        self,
        listener: socket.socket,
        deliver: Callable[[Connection], None],
        *,
        token: str | None,
        max_frame: int,
        io_timeout: float | None,
        message_timeout: float | None,
        timeout: float = HANDSHAKE_TIMEOUT,
        max_pending: int = MAX_PENDING,
        max_pending_per_peer: int = MAX_PENDING_PER_PEER,
    ) -> None:
        self._listener = listener
        self._deliver = deliver
        self._token = token
        self._max_frame = max_frame
        self._io_timeout = io_timeout
        self._message_timeout = message_timeout
        self._timeout = timeout
        self._max_pending = max_pending
        self._max_per_peer = max_pending_per_peer
        self._pending: dict[int, _Pending] = {}  # by fd, oldest first
        self._last_eviction_warning = -_QUIET
        self._evicted_quietly = 0
        self._stop_r, self._stop_w = socket.socketpair()
        self._poller = select.poll()
        self._poller.register(listener, select.POLLIN)
        self._poller.register(self._stop_r, select.POLLIN)
        self._thread = threading.Thread(target=self._run, name="transport-handshakes", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the thread and drop the handshakes in progress (the listener is the caller's to close)."""
        with contextlib.suppress(OSError):
            self._stop_w.send(b"x")
        self._thread.join(5.0)
        for pending in list(self._pending.values()):
            self._forget(pending)
            pending.sock.close()
        self._stop_r.close()
        self._stop_w.close()

    def _run(self) -> None:
        try:
            while True:
                timeout = None
                if self._pending:
                    timeout = max(0.0, min(p.deadline for p in self._pending.values()) - time.monotonic())
                events = self._poller.poll(None if timeout is None else int(timeout * 1000 + 0.999))
                for fd, _ in events:
                    if fd == self._stop_r.fileno():
                        return
                    if fd == self._listener.fileno():
                        self._accept()
                    elif (pending := self._pending.get(fd)) is not None:
                        self._continue(pending)
                now = time.monotonic()
                for pending in [p for p in self._pending.values() if p.deadline <= now]:
                    self._drop(pending, f"no handshake answer within {self._timeout:g}s", tell=True)
        except Exception:  # a bug here must not silently leave the worker deaf: say so loudly
            log.exception("env-worker: the handshake thread failed; no new connections are accepted")

    def _accept(self) -> None:
        while True:
            try:
                sock, address = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:  # e.g. out of file descriptors: keep serving what we have
                log.warning("env-worker: accept failed: %s", error)
                return
            host = str(address[0])
            peer = f"{host}:{address[1]}"
            self._make_room(host)
            try:
                sock.setblocking(False)
                configure_socket(sock)
                pending = _Pending(sock, host, peer, time.monotonic() + self._timeout)
                _send_nowait(sock, frame({"protocol": PROTOCOL, "nonce": pending.nonce}))
            except (OSError, TransportError) as error:
                log.warning("refused connection from %s: %s", peer, error)
                sock.close()
                continue
            self._pending[sock.fileno()] = pending
            self._poller.register(sock, _READABLE)

    def _make_room(self, host: str) -> None:
        """Drop the oldest handshake of ``host`` when it is at its limit, else, when every slot is taken, the
        oldest of the address holding the most: never the newcomer (see the module's docstring)."""
        counts: dict[str, int] = {}
        for pending in self._pending.values():
            counts[pending.host] = counts.get(pending.host, 0) + 1
        if counts.get(host, 0) >= self._max_per_peer:
            victim_host, why = host, f"more than {self._max_per_peer} handshakes in progress from {host}"
        elif len(self._pending) >= self._max_pending:
            victim_host = max(counts, key=lambda h: counts[h])
            why = f"more than {self._max_pending} handshakes in progress ({counts[victim_host]} from {victim_host})"
        else:
            return
        victim = next(p for p in self._pending.values() if p.host == victim_host)
        now = time.monotonic()
        if now - self._last_eviction_warning >= _QUIET:
            more = f" (and {self._evicted_quietly} more since the last warning)" if self._evicted_quietly else ""
            log.warning("dropped the handshake of %s: %s%s", victim.peer, why, more)
            self._last_eviction_warning, self._evicted_quietly = now, 0
        else:
            self._evicted_quietly += 1
        self._forget(victim)
        with contextlib.suppress(OSError, TransportError):
            _send_nowait(victim.sock, frame({"ok": False, "reason": why}))
        victim.sock.close()

    def _continue(self, pending: _Pending) -> None:
        try:
            answer = pending.feed()
        except ConnectionClosed:  # a TCP probe (Kubernetes, a port scan) or a client that gave up: not news
            log.info("connection from %s closed before its handshake", pending.peer)
            self._forget(pending)
            pending.sock.close()
            return
        except TransportError as error:
            self._drop(pending, f"bad handshake: {error}", tell=isinstance(error, FrameError))
            return
        if answer is None:
            return
        mac = answer.get("mac") if isinstance(answer, dict) else None
        expected = handshake_mac(self._token, pending.nonce)
        if not isinstance(mac, bytes) or not hmac.compare_digest(mac, expected):
            self._drop(pending, f"authentication failed (wrong or missing {TOKEN_VARIABLE})", tell=True)
            return
        self._forget(pending)
        sock = pending.sock
        try:
            _send_nowait(sock, frame({"ok": True}))
        except (OSError, TransportError) as error:
            log.warning("lost %s right after its handshake: %s", pending.peer, error)
            sock.close()
            return
        connection = Connection(sock, peer=pending.peer, max_frame=self._max_frame, timeout=self._io_timeout)
        connection.message_timeout = self._message_timeout
        self._deliver(connection)

    def _forget(self, pending: _Pending) -> None:
        fd = pending.sock.fileno()
        self._pending.pop(fd, None)
        self._poller.unregister(fd)

    def _drop(self, pending: _Pending, reason: str, *, tell: bool) -> None:
        log.warning("refused connection from %s: %s", pending.peer, reason)
        self._forget(pending)
        if tell:
            with contextlib.suppress(OSError, TransportError):
                _send_nowait(pending.sock, frame({"ok": False, "reason": reason}))
        pending.sock.close()
