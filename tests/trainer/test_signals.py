"""What the trainer's stop handler does in a process the trainer forked (trainer/signals.py)."""

from __future__ import annotations

import os
import signal
import time

from trainer.signals import StopRequest


def test_a_process_forked_from_the_trainer_ends_on_sigterm_as_it_would_have() -> None:
    """A user's environment may fork a helper; it inherits the handler but is not the trainer: SIGTERM (what the
    supervisor sends to whatever a run left behind) ends it at once, instead of asking it to checkpoint."""
    stop = StopRequest().install()
    try:
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None)  # installed: this is the main thread
        ready, started = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - the forked helper
            os.write(started, b"1")  # past Python's after-fork clean-up, which forgets a signal that came before it
            time.sleep(10)
            os._exit(0)
        os.close(started)
        assert os.read(ready, 1) == b"1"
        os.close(ready)
        os.kill(child, signal.SIGTERM)
        _, status = os.waitpid(child, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status
        assert not stop.requested  # the trainer itself was not asked to stop
    finally:
        stop.uninstall()


def test_the_trainer_itself_is_asked_to_stop() -> None:
    stop = StopRequest().install()
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 5
        while not stop.requested and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stop.requested and stop.reason == "SIGTERM"
    finally:
        stop.uninstall()
