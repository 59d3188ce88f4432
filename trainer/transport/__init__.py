"""The learner <-> env-worker transport (docs/design.md §8).

TensorForce's own socket transport fails on messages of 4096 bytes or more and never reconnects, so the trainer
has its own: length-prefixed frames up to a configurable size (64 MiB by default), msgpack with numpy arrays as
raw buffers (never pickle), a shared-token HMAC handshake on a thread of its own (strangers cannot keep the
learner out), timeouts on every read and write and a deadline per message on the server, TCP_NODELAY.
A bad frame, a bad handshake, an oversized or stalled frame ends that connection and nothing else.
"""

from trainer.transport.connection import (
    DEFAULT_MAX_FRAME,
    PROTOCOL,
    TOKEN_VARIABLE,
    Connection,
    connect,
    token_from_environment,
)
from trainer.transport.errors import ConnectionClosed, FrameError, HandshakeRefused, TransportError
from trainer.transport.server import MESSAGE_TIMEOUT, Server, is_loopback

__all__ = [
    "DEFAULT_MAX_FRAME",
    "MESSAGE_TIMEOUT",
    "PROTOCOL",
    "TOKEN_VARIABLE",
    "Connection",
    "ConnectionClosed",
    "FrameError",
    "HandshakeRefused",
    "Server",
    "TransportError",
    "connect",
    "is_loopback",
    "token_from_environment",
]
