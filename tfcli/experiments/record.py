"""``run.json``: what the last ``start`` of a run (an experiment, a trial, a sweep) recorded, typed.

Every later command reads it to find the run's backend and what that backend needs to find the run again; nothing
else decides where a run lives. The shared :class:`RunRecord` holds what every backend has (its name, when it
started and stopped, a sweep's trials at a time); each backend keeps its own state under its own key
(``"local": {"pid": ...}``, ``"gke": {"stack": ...}``) as a typed :class:`Handle` of its own package, which this
layer stores without knowing its fields — as SkyPilot's backends each own their ``ResourceHandle``.

Files written by earlier versions of tfcli load as they are: their backend's fields were flat keys beside
``backend``, and are read as that backend's section (:func:`sections_of`); unknown keys are ignored and a field of
the wrong type reads as unset, so an old or hand-edited file never stops ``status`` or ``stop``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar

MAX_RECORD_BYTES = 64 * 1024  # tfcli writes a few hundred bytes; anything larger is not a run record
SHARED = ("backend", "started_at", "stopped", "stopped_at", "parallel")  # run.json's keys every backend writes


def typed_value(kind: str, value: object) -> object:
    """``value`` as a field of type ``kind`` (``bool``, ``int | None`` or ``str | None``, as the annotations spell
    them) reads it, or unset: a flag is only ``true``, a number only a JSON integer."""
    if kind == "bool":
        return value is True
    if kind.startswith("int"):
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    return value if isinstance(value, str) else None


def read_fields(kind: type[Any], data: Mapping[str, object]) -> dict[str, object]:
    """The dataclass ``kind``'s fields read from ``data`` by :func:`typed_value` (missing keys: unset)."""
    return {item.name: typed_value(str(item.type), data.get(item.name)) for item in dataclasses.fields(kind)}


def written_fields(value: object) -> dict[str, Any]:
    """A record's fields as run.json holds them: every field (``null`` where unset, so scripts read one shape),
    flags only when raised."""
    return {
        item.name: getattr(value, item.name)
        for item in dataclasses.fields(value)  # type: ignore[arg-type]
        if getattr(value, item.name) is not False
    }


@dataclass(frozen=True)
class Handle:
    """A backend's own state in ``run.json`` under its :attr:`KEY`; a subclass is a frozen dataclass whose fields are
    ``bool``, ``int | None`` or ``str | None`` (``tfcli/local/handle.py``, ``tfcli/gke/handle.py``)."""

    KEY: ClassVar[str] = ""

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Self:
        return cls(**read_fields(cls, data))

    def to_json(self) -> dict[str, Any]:
        return written_fields(self)


H = TypeVar("H", bound=Handle)


def sections_of(data: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """Each backend's section of a run.json; a file of an earlier version has its backend's fields as flat keys
    beside ``backend`` (``{"backend": "gke", "stack": ...}``, every field written, null where unset), read as that
    backend's section: the ones set (a local run's file held the GKE fields as nulls)."""
    sections = {key: dict(value) for key, value in data.items() if key not in SHARED and isinstance(value, dict)}
    backend = data.get("backend")
    if isinstance(backend, str) and backend not in sections:
        flat = {k: v for k, v in data.items() if k not in SHARED and v is not None and not isinstance(v, dict)}
        if flat:
            sections[backend] = flat
    return sections


@dataclass(frozen=True)
class RunRecord:
    """The fields of ``run.json`` every backend has (docs/design.md §9.2), and each backend's own section."""

    backend: str | None = None  # where the run was last started: a registered backend's name
    started_at: str | None = None  # ISO time of that start (UTC)
    stopped: bool = False  # stopped for good (GKE: its stack destroyed after its results were downloaded)
    stopped_at: str | None = None
    parallel: int | None = None  # a sweep: trials at a time
    sections: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # backend name -> its handle's JSON

    @property
    def started(self) -> bool:
        """Whether anything was recorded (a run that never started has no ``run.json``)."""
        return self != RunRecord()

    def handle(self, kind: type[H]) -> H:
        """The backend ``kind``'s state (all unset when it wrote none)."""
        return kind.from_json(self.sections.get(kind.KEY, {}))

    def with_handle(self, handle: Handle) -> RunRecord:
        """A copy holding ``handle`` as its backend's section."""
        return self.but(sections={**self.sections, handle.KEY: handle.to_json()})

    def but(self, **changes: Any) -> RunRecord:
        """A copy with ``changes`` (the record is immutable: each write is a whole new file)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_json(cls, data: object) -> RunRecord:
        if not isinstance(data, dict):
            return cls()
        shared = read_fields(cls, data)
        shared.pop("sections")
        backend = data.get("backend")
        shared["backend"] = backend if isinstance(backend, str) and backend else None
        return cls(**shared, sections=sections_of(data))  # type: ignore[arg-type]

    def to_json(self) -> dict[str, Any]:
        """The shared fields (as :func:`written_fields`), then each backend's section under its name."""
        shared = written_fields(self)
        shared.pop("sections")
        return shared | {name: dict(section) for name, section in self.sections.items()}

    @classmethod
    def read(cls, path: Path) -> RunRecord:
        """The record in ``path``; an empty one when there is none or it cannot be read."""
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_RECORD_BYTES + 1)
        except OSError:
            return cls()
        if len(raw) > MAX_RECORD_BYTES:
            return cls()
        try:
            return cls.from_json(json.loads(raw))
        except (ValueError, UnicodeDecodeError):
            return cls()

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"
