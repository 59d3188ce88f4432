"""Each trial's score at each rung it passed, published once as a small immutable file, and what a trial knows of
its siblings' (docs/design.md §6.6).

A trial's score at a rung never changes (it is its episodes' before the rung), so it is worked out once, by the
trial itself as it passes the rung, and written to ``<its results folder>/rungs/<rung>.json`` (``{"rung": R,
"score": S}``; ``S`` null when no episode had ended by the rung). A sibling judging the rung reads that file, a few
dozen bytes, instead of the trial's whole ``progress.jsonl`` (2.5 s for 100 siblings of 2,000 episodes each,
6.2 s at 10,000: ``bench.rung_judgement``), and :class:`RungScores` keeps every score it has read, so each one is
read once per judging trial.

The file is never written twice: on the GCS FUSE mount a second write would replace the object's generation, and a
reader that had it open gets ``ESTALE``. gcsfuse publishes a file only when its writer closes it, and a reader
sees the metadata it cached for up to the mount's TTL (``trainer.kernel.spec.early_stop.METADATA_TTL_SECONDS``), so a
sibling's file may be missing, stale or unreadable for a while: any ``OSError`` (``ENOENT``, ``ESTALE``, ``EIO``)
or a file that does not parse is "not reached yet", never a failure; the rung is judged again later.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

from trainer.kernel.files import atomic_write_text
from trainer.kernel.spec.early_stop import TrialEarlyStop
from trainer.result_file import read_result, result_status
from trainer.rungs import combination_score

FOLDER = "rungs"

Reader = Callable[[Path], str]


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def rung_file(folder: Path, rung: int) -> Path:
    """Where the trial whose results are in ``folder`` publishes its score at ``rung``."""
    return folder / FOLDER / f"{rung}.json"


def publish(folder: Path, rung: int, score: float | None) -> None:
    """Write the trial's score at ``rung`` unless it is there already (a resumed run passes a rung again: the first
    file stands, so no reader ever meets a replaced object)."""
    path = rung_file(folder, rung)
    if path.is_file():
        return
    value = score if score is not None and math.isfinite(score) else None
    atomic_write_text(path, json.dumps({"rung": rung, "score": value}) + "\n")


class NotReached(Exception):
    """The trial's score at the rung is not (or not yet) readable."""


def read_published(folder: Path, rung: int, read: Reader = _read_text) -> float | None:
    """The score the trial in ``folder`` published at ``rung`` (None: it reached the rung without a score); raises
    :class:`NotReached` when there is no readable file for the rung."""
    try:
        data = json.loads(read(rung_file(folder, rung)))
    except (OSError, ValueError) as error:  # not there yet, ESTALE, or half visible: judged again later
        raise NotReached(str(error)) from None
    if not isinstance(data, dict) or data.get("rung") != rung:
        raise NotReached(f"{rung_file(folder, rung)}: not a score at rung {rung}")
    score = data.get("score")
    if score is None:
        return None
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise NotReached(f"{rung_file(folder, rung)}: score is not a number")
    return float(score)


class RungScores:
    """The published scores of a sweep's trials (``folders[k]``: trial ``k``'s results folder): each one read at
    most once, since it never changes; one not readable yet is read again at the next judgement."""

    def __init__(self, folders: Sequence[Path], read: Reader = _read_text) -> None:
        self._folders = list(folders)
        self._read = read
        self._known: dict[tuple[int, int], float | None] = {}
        self.reads = 0  # files opened (bench.rung_judgement and the tests count them)

    def know(self, trial: int, rung: int, score: float | None) -> None:
        """Record a score known without reading it (the trial's own)."""
        self._known[(trial, rung)] = score

    def reached(self, trial: int, rung: int) -> bool:
        """Whether trial ``trial`` has published its score at ``rung`` (reading it if not known yet)."""
        key = (trial, rung)
        if key not in self._known:
            self.reads += 1
            try:
                self._known[key] = read_published(self._folders[trial], rung, self._read)
            except NotReached:
                return False
        return True

    def score(self, trial: int, rung: int) -> float | None:
        """Trial ``trial``'s score at ``rung``: None when it has not reached it or reached it without a score."""
        return self._known.get((trial, rung)) if self.reached(trial, rung) else None


ENDED = ("completed", "pruned", "failed")  # a trial in one of these states reaches no further rung


def _status(folder: Path, read: Reader) -> str | None:
    """A trial's ``result.json`` status (None: none yet, or unreadable right now)."""
    return result_status(read_result(folder, read))


class SweepRungs:
    """A sweep's standing at its rungs from the published scores: each combination's IQM over the seeds that reached a
    rung, and whether a rung could still be reached by a combination that has not reached it yet."""

    def __init__(self, settings: TrialEarlyStop, folders: Sequence[Path], read: Reader = _read_text) -> None:
        self.settings = settings
        self.folders = list(folders)
        self.board = RungScores(folders, read)
        self._read = read
        self._members = [len(members) for members in settings.combinations()]

    def _trials(self, combination: int) -> range:
        first = combination * self.settings.seeds
        return range(first, first + self._members[combination])

    def scores(self, rung: int) -> dict[int, float]:
        """Each combination that has reached ``rung``: the IQM of its seeds that have."""
        found = {}
        for number in range(len(self._members)):
            values = [self.board.score(trial, rung) for trial in self._trials(number)]
            score = combination_score([value for value in values if value is not None])
            if score is not None:
                found[number] = score
        return found

    def could_still_decide(self, rung: int) -> int:
        """How many combinations without a score at ``rung`` still have a trial that may reach it (one that has not
        ended: queued, running, paused, or waiting at a lower rung). A ``result.json`` that cannot be read counts as
        not ended."""
        reached = self.scores(rung)
        return sum(
            1
            for number in range(len(self._members))
            if number not in reached
            and any(_status(self.folders[trial], self._read) not in ENDED for trial in self._trials(number))
        )
