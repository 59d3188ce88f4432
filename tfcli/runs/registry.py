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
    """A backend's name, how to make it, and the capabilities shared rules ask of it without making it (as
    SkyPilot's backends declare theirs): no shared rule compares a backend's name.

    ``keeps_runs``: a run started there lives on the backend's own resources, its results included, until ``stop``
    ends it (GKE's stack and bucket), so while its record is not stopped no other backend may start it and what this
    machine holds of it is only a copy; a backend that says False (the default) leaves its results on this machine
    (written here, or copied here by its ``download``), where a backend that keeps its runs cannot continue them.
    ``shared_clusters``: its runs may go on a project's shared cluster (``--cluster``), and ``reap`` destroys its
    idle ones (the backend is then a :class:`~tfcli.runs.backend.ClusterBackend`).
    ``flag``: the short flag that chooses it (``--local``); every other is chosen as ``--backend NAME``."""

    name: str
    make: Callable[[Caller], Backend]
    keeps_runs: bool = False
    title: str = ""  # how messages name it ("GKE"); the name when empty
    shared_clusters: bool = False
    flag: str = ""


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


def flag(name: str) -> str:
    """How a command line chooses the backend ``name``: its own short flag, else ``--backend NAME``."""
    found = _REGISTERED.get(name)
    return (found.flag if found is not None else "") or f"--backend {name}"


def on_shared_clusters() -> list[str]:
    """The registered backends whose runs may go on a shared cluster (``shared_clusters``), sorted."""
    return [name for name in names() if _REGISTERED[name].shared_clusters]


def keeps_runs(name: str | None) -> bool:
    """Whether the backend ``name`` keeps its runs (and their results) on its own resources until stopped; an
    unregistered one is taken to (this process cannot ask it), a run that never started has no backend to."""
    if name is None:
        return False
    found = _REGISTERED.get(name)
    return found is None or found.keeps_runs


def held(record: RunRecord) -> bool:
    """Whether the run's record says its backend may still hold it: one that keeps its runs, and not stopped. An
    unregistered backend's run is taken as held (this process cannot ask it)."""
    return not record.stopped and keeps_runs(record.backend)


def results_here(record: RunRecord) -> bool:
    """Whether the run's results on this machine are its own, not a copy of what its backend still holds: its
    backend left them here (one that does not keep its runs), or kept them until ``stop`` downloaded them. A run
    that never started has none."""
    return record.backend is not None and not held(record)


def held_elsewhere(record: RunRecord, here: str) -> bool:
    """Whether a backend other than ``here`` may still hold the run (:func:`held`)."""
    return record.backend != here and held(record)
