"""Turn SIGTERM and SIGINT into a polite request to stop.

Kubernetes suspends a Job (``tfcli experiment pause``), drains nodes and reclaims spot nodes with SIGTERM, then
SIGKILL after the grace period (the pod's, 120 s, for a pause or a drain; about 15 s, best effort, for a spot
reclaim under GKE's graceful node shutdown). The handler only sets a flag: the loop finishes the step under way, the
run checkpoints, writes ``result.json`` with status "paused" and exits 143 (128 + SIGTERM), which Kubernetes counts
as a failure of the pod rather than a completed Job. A second SIGINT (Ctrl-C twice) interrupts at once. Env-workers
(``trainer.env_worker``) exit 143 on the same signals.

A process the trainer forks (a user's environment may fork helpers) inherits the handler but is not the trainer:
there the signal does what it would have done, so the supervisor's SIGTERM to what a run left behind ends it at once
(not after the grace period and a SIGKILL), and it writes no "received" line into the trainer's log.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from types import FrameType
from typing import Any

log = logging.getLogger(__name__)


class StopRequest:
    """Set by a signal (or by :meth:`request`); read by the training loop between steps."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""
        self._previous: dict[int, Any] = {}
        self._pid = os.getpid()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        """Sleep until a stop is requested or ``timeout`` seconds have passed; whether one was requested."""
        return self._event.wait(timeout)

    def request(self, reason: str) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self._pid:  # a process forked from the trainer: the signal acts as it did before install
            previous = self._previous.get(signum)
            signal.signal(signum, signal.SIG_DFL if previous is None else previous)
            os.kill(os.getpid(), signum)
            return
        name = signal.Signals(signum).name
        if signum == signal.SIGINT and self.requested:
            raise KeyboardInterrupt
        log.warning("%s received: finishing the current step, then checkpointing and pausing", name)
        self.request(name)

    def install(self) -> StopRequest:
        """Handle SIGTERM and SIGINT (main thread only; elsewhere, e.g. a test's thread, signals stay as they are)."""
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def uninstall(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
