"""A GKE sweep worker's log, cut back into its trials: what ``tfcli experiment logs -e <trial>`` shows.

With early stopping a sweep's pods are workers (trainer/sweep_worker.py): each trains one trial after another, so a
pod's log is the logs of several trials in turn, and one trial's log may be spread over several pods (a trial that
waited at a rung is resumed by whichever worker is free; a killed worker's trial by another). The worker therefore
writes a line when it hands a trial to its trainer and one when that trainer exits (:func:`start_line`,
:func:`end_line`); everything between the two is that trial's (a worker trains one trial at a time, and its trainer
writes to the worker's own stdout and stderr). :class:`TrialSections` keeps a trial's sections of a log as it
streams; a worker that dies mid-trial leaves a section without its end, which the next start line closes.
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"sweep worker: trial (?P<trial>[a-z0-9][a-z0-9-]*) (?P<event>starts|ended \(exit -?\d+\))$")


def start_line(trial: str) -> str:
    """The line a worker logs as it starts ``trial``'s trainer."""
    return f"sweep worker: trial {trial} starts"


def end_line(trial: str, code: int) -> str:
    """The line a worker logs once ``trial``'s trainer has exited with ``code``."""
    return f"sweep worker: trial {trial} ended (exit {code})"


class TrialSections:
    """The lines of one trial's sections in a worker's log, fed in pieces as they arrive (cut anywhere)."""

    def __init__(self, trial: str) -> None:
        self.trial = trial
        self.inside = False  # the last marker seen started this trial, and no marker has ended it yet
        self._partial = ""

    def feed(self, text: str) -> list[str]:
        """The complete lines of ``text`` (with what came before it) that belong to the trial, with newlines."""
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        return [line + "\n" for line in lines if self._keeps(line)]

    def finish(self) -> list[str]:
        """The last line, if the log ended without its newline and it is the trial's."""
        last, self._partial = self._partial, ""
        return [last] if last and self._keeps(last) else []

    def _keeps(self, line: str) -> bool:
        marker = _MARKER.search(line.rstrip())  # a CRLF log, or trailing blanks
        if marker is None:
            return self.inside
        ours = marker["trial"] == self.trial
        self.inside = ours and marker["event"] == "starts"  # any other marker ends our section
        return ours
