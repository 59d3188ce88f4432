"""The one exception type of the project.

Library code raises :class:`TfcliError` (or its :class:`InvalidInput` flavour for user mistakes); only the CLI edge
turns it into a message and an exit code (docs/design.md §7.1). Exit codes: 1 the operation failed, 2 the input was
invalid.
"""

from __future__ import annotations

from collections.abc import Iterable


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
