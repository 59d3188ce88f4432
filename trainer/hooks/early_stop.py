"""Early stopping of a sweep's trial by asynchronous successive halving, decided by the trial itself.

A sweep with ``early_stop`` writes into each trial's spec its rungs, the reduction, and which trials make up each
combination (:class:`trainer.kernel.spec.early_stop.TrialEarlyStop`). When the trial passes a rung it publishes its
score there (:mod:`trainer.rung_scores`: a small file written once, in its results folder) and judges its combination by
:mod:`trainer.rungs` from the scores its siblings published in the shared results folder — ``experiments/`` on this
machine, the sweep's bucket through its GCS FUSE mount in a GKE pod, so a GKE sweep prunes with nobody's machine on. A
sibling's folder is the trial's own output folder with the sibling's name in place of its own:
``experiments/<sweep>-<j>/results`` or ``/results/<sweep>/<sweep>-<j>``. A score once read is kept (it never changes),
and a sibling whose file cannot be read (missing, ``ESTALE``, any ``OSError``) has not reached the rung.

A rung that fewer than ``reduction`` combinations have reached is not decided. Where the trial's scheduler starts
waiting trials again (the local queue), it waits there while others could still decide it (:mod:`trainer.rung_wait`:
it asks the loop to stop, checkpoints and ends ``paused``, waiting); with nobody left to compare against it goes on.
Elsewhere (a GKE Job) it goes on and judges the rung again after ``recheck_seconds``, but no sooner than the mount's
metadata TTL, doubling the wait after each undecided recheck (up to :data:`MAX_RECHECK_SECONDS`).

A pruned trial asks the loop to stop; the run checkpoints, writes ``result.json`` with status ``pruned`` and the
reason, and exits 0 (on GKE its index completes and the next trial takes the slot). Rungs a resumed run has already
passed are not judged again. A pruned trial trains again only when the user says so (``resume --include-pruned``
with a raised budget; ``start -s`` and a plain ``resume -s`` hold it), overriding the early stop: it is then off for
the rest of that trial, which trains on to its budget instead of being pruned at the next rung. The override is kept
in ``early_stop_released`` in the trial's folder, so a paused, preempted or crashed extension that resumes later
(its ``result.json`` no longer says pruned) is not judged again either.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from trainer.ended import RELEASED, Ended, release_note
from trainer.hooks import Hook
from trainer.hooks.progress_log import FILENAME as PROGRESS
from trainer.hooks.progress_log import read_episodes
from trainer.kernel.files import atomic_write_text
from trainer.kernel.scores import score_before
from trainer.kernel.spec.early_stop import METADATA_TTL_SECONDS, TrialEarlyStop
from trainer.kernel.state import RunState
from trainer.result_file import read_result
from trainer.rung_scores import NotReached, Reader, SweepRungs, publish, read_published, rung_file
from trainer.rung_wait import may_wait, standing
from trainer.signals import StopRequest

log = logging.getLogger(__name__)


def sibling_folder(output: Path, own: str, sibling: str) -> Path | None:
    """The sibling's results folder: ``output`` with its last part named ``own`` renamed ``sibling`` (None when no
    part of ``output`` is named ``own``)."""
    parts = output.parts
    for position in range(len(parts) - 1, -1, -1):
        if parts[position] == own:
            return Path(*parts[:position], sibling, *parts[position + 1 :])
    return None


MAX_RECHECK_SECONDS = 300.0  # the longest an undecided rung waits between judgements (see first_recheck)


def _finished_timesteps(folder: Path) -> int:
    """The timesteps a trial's ``result.json`` counts (0 when it has none yet or it cannot be read)."""
    value = read_result(folder).get("timesteps", 0)
    return int(value) if isinstance(value, int | float) else 0


def released(output: Path) -> bool:
    """Whether the run in ``output`` is a pruned trial trained on (see the module): its ``result.json``, from before
    this run, says pruned — then ``early_stop_released`` is written — or that file is there from an earlier run."""
    marker = output / RELEASED
    if marker.is_file():
        return True
    previous = read_result(output)
    if previous.get("status") != "pruned":
        return False
    atomic_write_text(marker, release_note(previous))
    return True


def trial_score(folder: Path, rung: int, *, reached: bool = False) -> float | None:
    """A trial's score at ``rung`` from its folder, or None if it has not reached the rung (``reached``: it has)."""
    episodes = read_episodes(folder / PROGRESS)
    steps = np.array([episode.timesteps for episode in episodes], dtype=float)
    if not reached and not (len(steps) and steps.max() >= rung) and _finished_timesteps(folder) < rung:
        return None
    order = np.argsort(steps, kind="stable")  # workers interleave
    returns = np.array([episode.episode_return for episode in episodes], dtype=float)
    return score_before(steps[order], returns[order], rung)


class EarlyStop(Hook):
    """Publishes the trial's score at each rung it passes and judges the rung from its siblings' published scores:
    prunes, goes on, or (where its scheduler starts it again, :mod:`trainer.rung_wait`) waits at the rung; while
    undecided and not waiting, judges it again, backing off."""

    def __init__(self, rungs: SweepRungs, own: int, stop: StopRequest, state: RunState) -> None:
        self._settings = rungs.settings
        self._rungs = rungs
        self._board = rungs.board
        self._own = own
        self._output = rungs.folders[own]
        self._stop = stop
        for rung in self._settings.rungs:
            if rung <= state.timesteps:
                self._publish(rung)  # passed before a crash that came before its file, or by an older trainer
        self._ahead = [rung for rung in self._settings.rungs if rung > state.timesteps]
        self._undecided: list[int] = []
        self._interval = first_recheck(self._settings)
        self._next_check = 0.0
        self.pruned: str | None = None  # the reason, once pruned
        self.waiting: str | None = None  # the reason, once it waits at a rung

    def _publish(self, rung: int) -> None:
        """Work out this trial's score at ``rung`` from its own progress (once) and publish it for its siblings."""
        published = rung_file(self._output, rung).is_file()
        score = None if published else trial_score(self._output, rung, reached=True)
        if not published:
            publish(self._output, rung, score)
        try:
            self._board.know(self._own, rung, read_published(self._output, rung))
        except NotReached:  # its own file unreadable right after writing it: judge from the number itself
            self._board.know(self._own, rung, score)

    def after_step(self, state: RunState) -> None:
        if self.pruned is not None or self.waiting is not None or self._stop.requested:
            return
        passed = False
        while self._ahead and state.timesteps >= self._ahead[0]:
            rung = self._ahead.pop(0)
            self._publish(rung)
            self._undecided.append(rung)
            passed = True
        now = time.monotonic()
        if not self._undecided or (not passed and now < self._next_check):
            return
        self.judge()
        if self._undecided and not passed:
            self._interval = min(self._interval * 2, max(MAX_RECHECK_SECONDS, self._settings.recheck_seconds))
        self._next_check = now + self._interval

    @property
    def reads(self) -> int:
        """Score files opened so far (each sibling's at most once per rung once it is readable)."""
        return self._board.reads

    def scores(self, rung: int) -> dict[int, float]:
        """Each combination that has reached ``rung``: the IQM of its seeds that have."""
        return self._rungs.scores(rung)

    def judge(self) -> None:
        """Decide every undecided rung that can be; the first that prunes (or waits) stops the run."""
        for rung in list(self._undecided):
            now = standing(self._rungs, self._own, rung)
            if now.decision == "wait":
                if may_wait():
                    self.waiting = now.words
                    log.info("early stop: %s; checkpointing and giving the slot to another trial", now.words)
                    self._stop.request(now.words)
                    return
                continue
            self._undecided.remove(rung)
            if now.decision == "go":
                log.info("early stop: rung %s timesteps: %s: going on", f"{rung:,}", now.words)
                continue
            self.pruned = now.words
            log.warning("early stop: pruned: %s; checkpointing and ending", self.pruned)
            self._stop.request(self.pruned)
            return


def first_recheck(settings: TrialEarlyStop) -> float:
    """Seconds before an undecided rung is judged again: ``recheck_seconds``, but never within the results mount's
    metadata TTL (a recheck then reads what the mount cached); each undecided recheck doubles it, up to
    :data:`MAX_RECHECK_SECONDS`."""
    return max(settings.recheck_seconds, float(METADATA_TTL_SECONDS))


def early_stopping(
    settings: TrialEarlyStop | None,
    name: str,
    output: Path,
    stop: StopRequest,
    state: RunState,
    read: Reader | None = None,
) -> EarlyStop | None:
    """The hook for a trial whose spec has ``early_stop`` (None otherwise, or with a warning when the run is not
    where its siblings can be found)."""
    if settings is None:
        return None
    if released(output):
        log.info("early stop: off for this run, a pruned trial resumed to train on (resume --include-pruned)")
        return None
    found = sweep_rungs(settings, name, output, read)
    if found is None:
        log.warning(
            "early_stop names sweep %s, but %s is not one of its trials in a folder named after it; not stopping early",
            settings.sweep,
            output,
        )
        return None
    rungs, index = found
    return EarlyStop(rungs, index, stop, state)


def sweep_rungs(
    settings: TrialEarlyStop, name: str, output: Path, read: Reader | None = None
) -> tuple[SweepRungs, int] | None:
    """The sweep's rungs as trial ``name`` (whose results are in ``output``) sees them, and its number (None: it is
    not one of the sweep's trials in a folder named after it)."""
    index = settings.index_of(name)
    output = output.absolute()
    found = [sibling_folder(output, name, settings.trial_name(k)) for k in range(settings.trials)]
    if index is None or any(folder is None for folder in found):
        return None
    folders = [folder for folder in found if folder is not None]
    return (SweepRungs(settings, folders, read) if read is not None else SweepRungs(settings, folders)), index


def waiting_decided(output: Path, settings: TrialEarlyStop | None, name: str) -> Ended | None:
    """A trial of an early-stopped sweep that waits at a rung (:mod:`trainer.rung_wait`): pruned there now (exit 0),
    or still waiting (exit 143); None when it goes on (promoted, or nobody left to compare against) or does not
    wait."""
    from trainer.rung_wait import decide_waiting

    if settings is None:
        return None
    found = sweep_rungs(settings, name, output)
    if found is None:
        return None
    rungs, index = found
    decided = decide_waiting(settings, rungs, index, output, read_result(output))
    return Ended(*decided) if decided is not None else None
