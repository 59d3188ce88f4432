"""Ending the processes a test started: one way for the stand-ins' daemons (``gcsfuse.py``) and the journeys'
env-workers (``journeys/journey_kit.py``), so that none outlives its test or blocks on a pipe nobody reads."""

from __future__ import annotations

import subprocess
from typing import Any


def stop_process(process: subprocess.Popen[Any], timeout: float) -> None:
    """SIGTERM (when it still runs), then SIGKILL after ``timeout`` seconds; what its pipes still hold is read, so a
    process writing to a full pipe cannot hang the wait."""
    if process.poll() is None:
        process.terminate()
    try:
        process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
