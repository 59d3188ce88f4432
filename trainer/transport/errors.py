"""What can go wrong on a connection; every one of them ends that connection and nothing else."""

from __future__ import annotations


class TransportError(Exception):
    """The connection cannot be used any more (closed, timed out, or the peer spoke nonsense)."""


class ConnectionClosed(TransportError):
    """The peer closed the connection."""


class FrameError(TransportError):
    """A frame that does not decode, or is larger than this side accepts."""


class HandshakeRefused(TransportError):
    """The peer refused our handshake (wrong or missing TRAINER_TOKEN) or spoke another protocol."""
