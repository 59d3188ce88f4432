"""The backends by name: each registers itself (``tfcli/local/__init__.py``, ``tfcli/gke/__init__.py``) with a
factory that imports its implementation only when a run needs it, so ``tfcli --help`` and ``experiment list`` of a
local project load no Pulumi or cloud SDK. Modelled on SkyPilot's registries (``sky/backends``: each backend a class
with its ``NAME`` and its own handle type; ``sky/utils/registry.py``: a name -> class table that the CLI and the
YAML files look names up in): a new backend registers here and touches no shared file.

A name comes from ``--backend``, ``tfcli.yaml``'s ``backend:`` or a run's ``run.json``; an unknown one is an
``InvalidInput`` naming where it was read and listing the registered names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tfcli.experiments.record import RunRecord
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.suggest import did_you_mean

if TYPE_CHECKING:
    from tfcli.runs.backend import Backend


@dataclass(frozen=True)
class Caller:
    """What the caller (the CLI) lends a backend: how to show a long update (``observer``), to offer installing a
    missing tool (``install_prompt``) and to ask before a first image build (``build_prompt``). A backend uses what
    it needs; each is None outside the CLI."""

    observer: Any = None
    install_prompt: Any = None
    build_prompt: Callable[[str], bool] | None = None


@dataclass(frozen=True)
class Registration:
    """A backend's name, how to make it, and what shared rules need to know of it without making it.

    ``keeps_runs``: a run started there lives on the backend's own resources until ``stop`` ends it (GKE's stack),
    so while its record is not stopped no other backend may start it; a backend whose runs are processes here says
    False (their liveness is their process's)."""

    name: str
    make: Callable[[Caller], Backend]
    keeps_runs: bool = False
    title: str = ""  # how messages name it ("GKE"); the name when empty


_REGISTERED: dict[str, Registration] = {}


def register(registration: Registration) -> None:
    """Add (or replace) a backend under its name."""
    _REGISTERED[registration.name] = registration


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def names() -> list[str]:
    """The registered backends' names, sorted (the order packages are imported in is no order to show)."""
    return sorted(_REGISTERED)


def registration(name: str, where: str = "--backend") -> Registration:
    """The backend ``name``; ``where``: the flag or ``file: field`` it was read from, for the error."""
    found = _REGISTERED.get(name)
    if found is None:
        known = names()
        raise InvalidInput(
            f"{where}: unknown backend '{name}'{did_you_mean(name, known)}; the registered backends are "
            f"{', '.join(known)}"
        )
    return found


def create(name: str, caller: Caller | None = None, where: str = "--backend") -> Backend:
    return registration(name, where).make(caller or Caller())


def title(name: str) -> str:
    """How messages name the backend ``name`` (an unregistered one by its name)."""
    found = _REGISTERED.get(name)
    return (found.title if found is not None else "") or name


def held(record: RunRecord) -> bool:
    """Whether the run's record says its backend may still hold it: one that keeps its runs, and not stopped. An
    unregistered backend's run is taken as held (this process cannot ask it)."""
    if record.backend is None or record.stopped:
        return False
    found = _REGISTERED.get(record.backend)
    return found is None or found.keeps_runs


def held_elsewhere(record: RunRecord, here: str) -> bool:
    """Whether a backend other than ``here`` may still hold the run (:func:`held`)."""
    return record.backend != here and held(record)
