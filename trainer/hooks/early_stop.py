"""Early stopping of a sweep's trial by asynchronous successive halving, decided by the trial itself.

A sweep with ``early_stop`` writes into each trial's spec its rungs, the reduction, and which trials make up each
combination (:class:`tfcli.spec.early_stop.TrialEarlyStop`). When the trial passes a rung it publishes its score
there (:mod:`trainer.rung_scores`: a small file written once, in its results folder) and judges its combination by
:mod:`trainer.rungs` from the scores its siblings published in the shared results folder — ``experiments/`` on this
machine, the sweep's bucket through its GCS FUSE mount in a GKE pod, so a GKE sweep prunes with nobody's machine
on. A sibling's folder is the trial's own output folder with the sibling's name in place of its own:
``experiments/<sweep>-<j>/results`` or ``/results/<sweep>/<sweep>-<j>``. A score once read is kept (it never
changes), and a sibling whose file cannot be read (missing, ``ESTALE``, any ``OSError``) has not reached the rung.

A rung that fewer than ``reduction`` combinations have reached is not decided: the trial goes on and judges it
again after ``recheck_seconds``, but no sooner than the mount's metadata TTL, doubling the wait after each undecided
recheck (up to :data:`MAX_RECHECK_SECONDS`). It never waits: a waiting trial would hold a slot that a queued
sibling needs. So a hopeless combination that gets to a rung first is pruned as soon as enough others get there,
if it is still running.

A pruned trial asks the loop to stop; the run checkpoints, writes ``result.json`` with status ``pruned`` and the
reason, and exits 0 (on GKE its index completes and the next trial takes the slot). Rungs a resumed run has already
passed are not judged again. A pruned trial trains again only when the user says so (``resume --include-pruned``
with a raised budget; ``start -s`` and a plain ``resume -s`` hold it), overriding the early stop: it is then off for
the rest of that trial, which trains on to its budget instead of being pruned at the next rung. The override is kept
in ``early_stop_released`` in the trial's folder, so a paused, preempted or crashed extension that resumes later
(its ``result.json`` no longer says pruned) is not judged again either.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import numpy as np

from tfcli.spec.early_stop import METADATA_TTL_SECONDS, TrialEarlyStop
from trainer.files import atomic_write_text
from trainer.hooks import Hook
from trainer.hooks.progress_log import FILENAME as PROGRESS
from trainer.hooks.progress_log import read_episodes
from trainer.rung_scores import NotReached, Reader, RungScores, publish, read_published, rung_file
from trainer.rungs import combination_score, judge
from trainer.scores import score_before
from trainer.signals import StopRequest
from trainer.state import RunState

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
RELEASED = "early_stop_released"  # in a pruned trial's folder once it was resumed to train on (see the module)


def _result(folder: Path) -> dict[str, object]:
    try:
        data = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _finished_timesteps(folder: Path) -> int:
    """The timesteps a trial's ``result.json`` counts (0 when it has none yet or it cannot be read)."""
    value = _result(folder).get("timesteps", 0)
    return int(value) if isinstance(value, int | float) else 0


def released(output: Path) -> bool:
    """Whether the run in ``output`` is a pruned trial trained on (see the module): its ``result.json``, from before
    this run, says pruned — then ``early_stop_released`` is written — or that file is there from an earlier run."""
    marker = output / RELEASED
    if marker.is_file():
        return True
    previous = _result(output)
    if previous.get("status") != "pruned":
        return False
    atomic_write_text(marker, json.dumps({"pruned": previous.get("reason"), "timesteps": previous.get("timesteps")}))
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
    """Publishes the trial's score at each rung it passes and judges the rung from its siblings' published scores
    (again, while undecided, backing off); asks the loop to stop when pruned."""

    def __init__(
        self,
        settings: TrialEarlyStop,
        folders: list[Path],
        own: int,
        stop: StopRequest,
        state: RunState,
        read: Reader | None = None,
    ) -> None:
        self._settings = settings
        self._folders = folders  # trial k's results folder, this trial's own at ``own``
        self._own = own
        self._output = folders[own]
        self._stop = stop
        self._board = RungScores(folders, read) if read is not None else RungScores(folders)
        self._members = [len(members) for members in settings.combinations()]
        for rung in settings.rungs:
            if rung <= state.timesteps:
                self._publish(rung)  # passed before a crash that came before its file, or by an older trainer
        self._ahead = [rung for rung in settings.rungs if rung > state.timesteps]
        self._undecided: list[int] = []
        self._interval = first_recheck(settings)
        self._next_check = 0.0
        self.pruned: str | None = None  # the reason, once pruned

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
        if self.pruned is not None or self._stop.requested:
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
        found = {}
        seeds = self._settings.seeds
        for number, members in enumerate(self._members):
            values = [self._board.score(number * seeds + k, rung) for k in range(members)]
            score = combination_score([value for value in values if value is not None])
            if score is not None:
                found[number] = score
        return found

    def judge(self) -> None:
        """Decide every undecided rung that enough combinations have reached; the first that prunes stops the run."""
        reduction = self._settings.reduction
        for rung in list(self._undecided):
            verdict = judge(self._own // self._settings.seeds, self.scores(rung), reduction)
            if verdict is None:
                continue
            self._undecided.remove(rung)
            if verdict.goes_on:
                log.info(
                    "early stop: rung %s timesteps: IQM %.1f, in the top %d of %d combinations: going on",
                    f"{rung:,}",
                    verdict.score,
                    verdict.kept,
                    verdict.combinations,
                )
                continue
            self.pruned = verdict.reason(rung, reduction)
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
    index = settings.index_of(name)
    output = output.absolute()
    found = [sibling_folder(output, name, settings.trial_name(k)) for k in range(settings.trials)]
    if index is None or any(folder is None for folder in found):
        log.warning(
            "early_stop names sweep %s, but %s is not one of its trials in a folder named after it; not stopping early",
            settings.sweep,
            output,
        )
        return None
    folders = [folder for folder in found if folder is not None]
    return EarlyStop(settings, folders, index, stop, state, read)
