"""``exit_now(code)``: end a finished process without the interpreter's teardown, for the trainer's processes whose
work is all written by the time they end (the trainer, ``python -m trainer``; the curve's helper,
:mod:`trainer.curve_painter`).

What is left at that point is the teardown at interpreter exit: TensorFlow destroying graphs, functions and thread
pools (~0.8 s of every run on a 2-core machine), matplotlib's modules in the curve's helper (~0.1 s of CPU, ~0.3 s
of wall on a busy machine), which the trainer, the supervisor and the user would wait for. So: flush the logs and
standard streams, then ``os._exit``. Only a command line does this; code called from Python returns as usual, and
under a profiler or tracer (cProfile, coverage) the process exits normally so that they write their data.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys


def exit_now(code: int) -> None:
    """End the process with ``code`` now: everything it writes must be closed (files replaced atomically, writers
    and agents closed) before this is called."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
