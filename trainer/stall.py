"""Stall detection: an environment that does not answer within the spec's ``step_timeout`` fails the run.

A ``step()`` that never returns (a deadlock, a simulator waiting on a socket), or an env-worker that died and is
never coming back (its environment called ``os._exit``), would otherwise leave the run ``running`` for ever. The
pool is wrapped (:class:`trainer.pools.watched.WatchedPool`): a ``reset`` or ``step`` that gets no live answer at
all — it hangs, or every environment asked is lost — starts the clock, the first live answer stops it. The
watchdog thread sees the clock pass ``step_timeout`` and interrupts the main thread with ``SIGUSR1``, whose handler
raises :class:`StepStalled` there: a signal wakes a blocking system call (``sleep``, ``recv``) and a Python loop
alike, and ``trainer.run`` then fails the run as for any error — the checkpoints stay, ``result.json`` says
``failed`` with the counts and the one line below, and the trainer exits 1. The time an agent update takes is
never counted (the clock runs only while the pool is asked and nothing answered).

Only the main thread can take a signal: a run started from another thread (a test) is not watched.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from types import FrameType
from typing import Any

from trainer.kernel.errors import TfcliError

log = logging.getLogger(__name__)

INTERRUPT = signal.SIGUSR1
POLL_SECONDS = 0.5


class StepStalled(TfcliError):
    """No environment answered within ``step_timeout``."""


class StallWatch:
    """The clock the pool starts and stops, and the thread that interrupts the run when it runs out."""

    def __init__(self, timeout: float, environment: str) -> None:
        self.timeout = timeout
        self.environment = environment
        self._since: float | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous: Any = None
        self._fired = False

    def waiting(self) -> None:
        """The pool was asked; the clock starts unless it runs already (an earlier call got no answer either)."""
        if self._since is None:
            self._since = time.monotonic()

    def answered(self) -> None:
        self._since = None

    @property
    def message(self) -> str:
        return (
            f"step_timeout: {self.environment} answered no reset or step within {self.timeout:g} s "
            "(it hangs, or its process died)"
        )

    def install(self) -> StallWatch:
        if threading.current_thread() is not threading.main_thread():
            return self
        self._previous = signal.signal(INTERRUPT, self._interrupt)
        self._thread = threading.Thread(target=self._watch, name="stall-watch", daemon=True)
        self._thread.start()
        return self

    def uninstall(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            signal.signal(INTERRUPT, self._previous)

    def _interrupt(self, _signum: int, _frame: FrameType | None) -> None:
        if self._fired:
            self._fired = False
            raise StepStalled(self.message)

    def _watch(self) -> None:
        main = threading.main_thread().ident
        while not self._done.wait(POLL_SECONDS):
            since = self._since
            if since is not None and time.monotonic() - since > self.timeout and main is not None:
                log.info("%s", self.message)
                self._fired = True
                self._since = None  # once: the run is failing now
                signal.pthread_kill(main, INTERRUPT)
