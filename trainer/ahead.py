"""A trial started ahead of its turn: a local sweep's queue launches the next trial while the one before trains,
so that its start-up (the supervisor, the agent's build, TensorForce's tracing of its graphs) runs on the core the
training trial leaves idle. Such a trial gets ready, then waits here until its queue gives it a slot.

The queue names a file in ``TFCLI_HOLD_FILE`` holding its own pid (:mod:`tfcli.local.ahead` writes it); the trial
waits while that file exists and that process lives, and trains once the queue deletes it. A stop request (pause,
stop) ends the wait, and so does a queue that died (killed, the machine's OOM killer) with the file still there; the
run then pauses before its first step, as any run paused that early does, and the next ``start -s`` starts it in its
turn (its running trials, adopted, keep their slots).

Getting ready is TensorForce's tracing of the functions the loop calls: TensorForce 0.6.5 wraps each API function
(``act``, ``observe``, ``independent_act``) in ``tf.function(input_signature=...)`` once the model is initialized
and keeps it per graph parameters in ``model._<name>_graphs`` (tensorforce/core/module.py, ``tf_function``), then
traces it at its first call: ``observe``'s trace, the update included, is ~1.4 s of a PPO CartPole trial's 7 s here.
With an input signature, ``get_concrete_function()`` traces the same graph without running it, and the first call
uses it. The graph is the same whenever it is traced: a ``tf.function`` graph takes the global seed at tracing
(set as the agent was built) and numbers its random ops' seeds within itself (tensorflow/python/framework/
random_seed.py, ``get_seed``), so the trial's numbers are those of the trial run alone
(tests/cli/test_sweep_ahead.py compares them).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from trainer.signals import StopRequest

log = logging.getLogger(__name__)

HOLD_VARIABLE = "TFCLI_HOLD_FILE"
POLL_SECONDS = 0.02  # how late a released trial may notice its turn: a stat a tick, nothing to the other core


def hold_file() -> Path | None:
    """The file this run waits on before it trains, when its sweep's queue started it ahead of its turn."""
    named = os.environ.get(HOLD_VARIABLE)
    return Path(named) if named else None


def holding(path: Path) -> bool:
    """Whether ``path`` holds this trial back: it exists and names a process that lives (its queue)."""
    try:
        pid = int(path.read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):  # gone, unreadable, not a pid, or no such process: nothing holds the trial
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (macOS): the signal's answer
    return stat.rpartition(")")[2].split()[0] != "Z"  # a queue that died, not yet reaped by its parent, holds nothing


def get_ready(agent: Any, *, deterministic: bool) -> None:
    """Trace the TensorForce functions the training loop will call (trainer/acting.py), without running them."""
    names = ("independent_act",) if deterministic else ("act", "observe")
    for name in names:
        for function in getattr(agent.model, f"_{name}_graphs", {}).values():
            function.get_concrete_function()


def wait_for_turn(path: Path, stop: StopRequest) -> None:
    """Return once the queue lets the trial train or a stop is requested; a queue gone with its hold file still
    there requests the stop itself: trained now, the trial would make one more than ``--parallel`` (the next
    ``start -s`` adopts every trial that runs), so it pauses before its first step and is started in its turn."""
    if holding(path):
        log.info("ready; waiting for a slot in the sweep's queue")
    while holding(path) and not stop.wait(POLL_SECONDS):
        pass
    if path.exists() and not stop.requested:  # there, and no queue holds it: the queue died
        log.warning("the sweep's queue is gone: pausing before the first step, to be started again in its turn")
        stop.request("its sweep's queue is gone")
