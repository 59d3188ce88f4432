"""The one exception type of the project.

Library code raises :class:`TfcliError` (or its :class:`InvalidInput` flavour for user mistakes); only the CLI edge
turns it into a message and an exit code (docs/design.md §7.1). Exit codes: 1 the operation failed, 2 the input was
invalid. :func:`io_failure` turns the operating system's and TensorFlow's file errors (a full disk above all) into a
``TfcliError`` of one line: what failed, where, and how much space is left there.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path


class TfcliError(Exception):
    """An expected failure with a message meant for the user."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def lines(self) -> list[str]:
        """The message as the lines the CLI prints."""
        out = self.message.splitlines() or [self.message]
        if self.hint:
            out.append(f"hint: {self.hint}")
        return out


MAX_PROBLEMS = 50


def capped(problems: list[str]) -> list[str]:
    """The first :data:`MAX_PROBLEMS` problems, then one line counting the rest: a file with 300,000 unknown keys
    gets a readable answer, not 300,000 lines."""
    if len(problems) <= MAX_PROBLEMS + 1:
        return problems
    return [*problems[:MAX_PROBLEMS], f"... and {len(problems) - MAX_PROBLEMS:,} more problems"]


class InvalidInput(TfcliError):
    """The user's input (a spec file, a flag, a name) is wrong; exit code 2.

    ``problems`` holds every problem found, each already formatted as ``<file>: <dotted.path>: <message>``, so that
    all the problems of a file are reported at once.
    """

    exit_code = 2

    def __init__(self, problems: Iterable[str] | str, *, hint: str | None = None) -> None:
        self.problems = capped([problems] if isinstance(problems, str) else list(problems))
        super().__init__("\n".join(self.problems), hint=hint)

    def in_file(self, shown: str) -> InvalidInput:
        """The same problems, each prefixed with the spec file they were found in (``<file>: <field>: ...``)."""
        return InvalidInput([f"{shown}: {problem}" for problem in self.problems], hint=self.hint)


# errno values that mean "the disk is full" (the message then says how much space is left)
_OUT_OF_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
# TensorFlow's file-system errors read "<path>; <strerror>" (e.g. ".../agent-1.data...tempstate123; No space left on
# device [Op:SaveV2]"), also inside the long "Graph execution error" text of a traced function.
_TENSORFLOW_IO = re.compile(r"(?P<path>/[^\s;]+);\s*(?P<reason>[^\n\[]+?)\s*(?:\[|\n|$)")


def io_failure(
    error: BaseException,
    doing: str | None = None,
    where: Path | str | None = None,
    *,
    otherwise: Path | str | None = None,
) -> TfcliError | None:
    """``error`` as one line if it is an I/O error (``OSError`` with an errno, or TensorFlow's "<path>; <strerror>"
    errors such as ``ResourceExhaustedError``), else None (a bug: the caller re-raises it as it is).

    ``doing`` says what failed ("saving checkpoint 2"), ``where`` the file or folder it was about (rather than the
    file the error names, such as TensorFlow's temporary one), ``otherwise`` the place to name when the error names
    none. A full disk adds the space left there: "... (0 B free of 40.0 MiB on that disk)".
    """
    if isinstance(error, TfcliError):
        return error
    path: str | None = None
    if isinstance(error, OSError) and error.errno is not None:
        reason = error.strerror or os.strerror(error.errno)
        path = os.fsdecode(error.filename) if error.filename is not None else None
        full = error.errno in _OUT_OF_SPACE
    elif type(error).__module__.startswith("tensorflow") and (found := _TENSORFLOW_IO.search(str(error))):
        reason, path = found["reason"].strip(), found["path"]
        full = (
            "space" in reason.lower() or "quota" in reason.lower() or type(error).__name__ == "ResourceExhaustedError"
        )
    else:
        return None
    place = str(where) if where is not None else path or (str(otherwise) if otherwise is not None else None)
    text = f"{doing} failed: {reason}" if doing else reason
    if place:
        text += f": {place}"
    if full:
        text += f" ({space_left(Path(place or '.'))})"
    return TfcliError(text)


def space_left(path: Path) -> str:
    """The space left on the file system holding ``path`` (or its nearest folder that exists), in words: "12.0 MiB
    free of 40.0 MiB on that disk"."""
    folder = path
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        usage = shutil.disk_usage(folder)
    except OSError:
        return "free space unknown"
    return f"{_size(usage.free)} free of {_size(usage.total)} on that disk"


def _size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")
