"""Early stopping of a sweep's trial by asynchronous successive halving, decided by the trial itself.

A sweep with ``early_stop`` writes into each trial's spec its rungs, the reduction, and which trials make up each
combination (:class:`tfcli.spec.early_stop.TrialEarlyStop`). When the trial passes a rung, this hook reads its
siblings' ``progress.jsonl`` and ``result.json`` from the shared results folder — ``experiments/`` on this machine,
the sweep's bucket through its GCS FUSE mount in a GKE pod, so a GKE sweep prunes with nobody's machine on — and
judges its combination by :mod:`trainer.rungs`. A sibling's folder is the trial's own output folder with the
sibling's name in place of its own: ``experiments/<sweep>-<j>/results`` or ``/results/<sweep>/<sweep>-<j>``.

A sibling has reached a rung when its episodes or its ``result.json`` count that many timesteps; its score is its
episodes' up to the rung, so every trial sees the same numbers whenever it reads them. A rung that fewer than
``reduction`` combinations have reached is not decided: the trial goes on and judges it again every
``recheck_seconds`` (it never waits: a waiting trial would hold a slot that a queued sibling needs). So a hopeless
combination that gets to a rung first is pruned as soon as enough others get there, if it is still running.

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

from tfcli.spec.early_stop import TrialEarlyStop
from trainer.ended import RELEASED, release_note
from trainer.files import atomic_write_text
from trainer.hooks import Hook
from trainer.hooks.progress_log import FILENAME as PROGRESS
from trainer.hooks.progress_log import read_episodes
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
    """Judges the trial at each rung it passes (and again, while undecided); asks the loop to stop when pruned."""

    def __init__(
        self,
        settings: TrialEarlyStop,
        combinations: list[list[Path]],
        own: int,
        output: Path,
        stop: StopRequest,
        state: RunState,
    ) -> None:
        self._settings = settings
        self._combinations = combinations
        self._own = own
        self._output = output
        self._stop = stop
        self._ahead = [rung for rung in settings.rungs if rung > state.timesteps]
        self._undecided: list[int] = []
        self._next_check = 0.0
        self.pruned: str | None = None  # the reason, once pruned

    def after_step(self, state: RunState) -> None:
        if self.pruned is not None or self._stop.requested:
            return
        passed = False
        while self._ahead and state.timesteps >= self._ahead[0]:
            self._undecided.append(self._ahead.pop(0))
            passed = True
        now = time.monotonic()
        if not self._undecided or (not passed and now < self._next_check):
            return
        self._next_check = now + self._settings.recheck_seconds
        self.judge()

    def scores(self, rung: int) -> dict[int, float]:
        """Each combination that has reached ``rung``: the IQM of its seeds that have."""
        found = {}
        for number, folders in enumerate(self._combinations):
            seeds = [trial_score(folder, rung, reached=folder == self._output) for folder in folders]
            score = combination_score([value for value in seeds if value is not None])
            if score is not None:
                found[number] = score
        return found

    def judge(self) -> None:
        """Decide every undecided rung that enough combinations have reached; the first that prunes stops the run."""
        reduction = self._settings.reduction
        for rung in list(self._undecided):
            verdict = judge(self._own, self.scores(rung), reduction)
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


def early_stopping(
    settings: TrialEarlyStop | None, name: str, output: Path, stop: StopRequest, state: RunState
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
    folders = [[sibling_folder(output, name, trial) for trial in members] for members in settings.combinations()]
    if index is None or any(folder is None for members in folders for folder in members):
        log.warning(
            "early_stop names sweep %s, but %s is not one of its trials in a folder named after it; not stopping early",
            settings.sweep,
            output,
        )
        return None
    combinations = [[folder for folder in members if folder is not None] for members in folders]
    return EarlyStop(settings, combinations, index // settings.seeds, output, stop, state)
