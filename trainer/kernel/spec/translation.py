"""A spec document in TensorForce's own form, translated into tfcli's, and the short note that says how.

The translation happens once, on the raw document, before validation (trainer/kernel/spec/tensorforce_forms.py); the
resolved spec (``experiment.yaml``) holds only tfcli's forms, so the trainer, a sweep and a restart never see the
TensorForce form again. The note goes to whoever asked for the translation: the commands that read a user's files
(``experiment new``, ``validate``) open :func:`collect_notes` and print what it gathered; the trainer reading a
resolved spec gathers nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

_notes: ContextVar[list[str] | None] = ContextVar("tensorforce_notes", default=None)


@dataclass
class Translation:
    """The tfcli form of one document, the experiment keys it implies, and what was done with each TensorForce key."""

    document: Any
    experiment: dict[str, Any] = field(default_factory=dict)  # e.g. max_timesteps_per_episode from the file
    mapped: list[str] = field(default_factory=list)  # "saver.max_checkpoints 5 -> keep_checkpoints 5"
    managed: list[str] = field(default_factory=list)  # keys whose job tfcli does itself (directories: results/)
    ignored: list[str] = field(default_factory=list)  # keys with no effect here, each with its reason
    problems: list[str] = field(default_factory=list)  # "<file>: <field>: <message>"; ``document`` is then the
    # rest to validate as usual (None: nothing worth validating), so every problem is reported at once

    def note(self, shown: str, what: str) -> str:
        """A few lines: the file, then mapped / tfcli manages / ignored, each line only when it has something."""
        lines = [f"{shown}: TensorForce {what} form, translated"]
        sections = (("mapped", self.mapped), ("tfcli manages", self.managed), ("ignored", self.ignored))
        for title, items in sections:
            if items:
                lines.append(f"  {title}: {'; '.join(items)}")
        return "\n".join(lines)


@contextlib.contextmanager
def collect_notes() -> Iterator[list[str]]:
    """Gather the notes of every translation made inside the block (one string per translated document)."""
    notes: list[str] = []
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def emit(note: str) -> None:
    """Hand a note to the block collecting them; without one (the trainer) it goes nowhere."""
    notes = _notes.get()
    if notes is not None and note not in notes:
        notes.append(note)


class DocumentTranslator:
    """One document being translated (an agent's or an environment's): what is left of it, and the problems found,
    gathered and raised together, each naming the file and the key."""

    def __init__(self, document: dict[str, Any], shown: str, prefix: str) -> None:
        self.rest = dict(document)
        self.shown, self.prefix = shown, prefix
        self.out = Translation(document=None)

    def problem(self, path: str, message: str) -> None:
        self.out.problems.append(f"{self.shown}: {self.prefix}{path}: {message}")
