"""Loading experiment and cluster specs: the one place that turns spec files into validated models.

Each reference field (agent, network, environment, cluster) may be a name, a path or an inline mapping; names and
paths are replaced by the document they point to before validation, and every problem — in the experiment file or
in a file it references — is reported at once, each line naming the file it is in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.cluster import Cluster
from trainer.kernel.spec.documents import display_path, read_document
from trainer.kernel.spec.errors import dotted, problems_of
from trainer.kernel.spec.experiment import REFERENCE_FIELDS, Experiment
from trainer.kernel.spec.library import ConfigLibrary, looks_like_path
from trainer.kernel.spec.suggest import did_you_mean
from trainer.kernel.spec.tensorforce_forms import translate_references

SpecT = TypeVar("SpecT", Experiment, Cluster)


@dataclass(frozen=True)
class Loaded(Generic[SpecT]):
    """A validated spec and the file it was read from (None for a spec built from flags or stack config)."""

    spec: SpecT
    path: Path | None


def locate(reference: str | Path, kind: str, library: ConfigLibrary, *, base: Path, where: str = "") -> Path:
    """The file a reference points to: a path (relative to ``base``, then the current folder) or a name."""
    if isinstance(reference, Path) or looks_like_path(reference):
        path = Path(reference).expanduser()
        for candidate in [path] if path.is_absolute() else [base / path, Path.cwd() / path]:
            if candidate.is_file():
                return candidate
        raise InvalidInput(f"{where}no such file: {reference}")
    return library.require(kind, reference, where=where)


def _flag(key: str) -> str:
    """The command-line flag that overrides a spec key (``num_workers`` -> ``--num-workers``)."""
    return "--" + key.replace("_", "-")


def _mapping(data: Any, shown: str, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InvalidInput(f"{shown}: expected a mapping of {what} keys, got {type(data).__name__}")
    return data


def non_finite(data: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], float]]:
    """Where ``data`` holds NaN or an infinity (YAML ``.nan``, ``.inf``, ``--set x=nan``): no setting of a spec means
    one, and TensorForce answers them with "Unexpected error!" at best."""
    if isinstance(data, float) and not math.isfinite(data):
        return [(path, data)]
    if isinstance(data, dict):
        return [found for key, value in data.items() for found in non_finite(value, (*path, str(key)))]
    if isinstance(data, list):
        return [found for index, value in enumerate(data) for found in non_finite(value, (*path, index))]
    return []


def _validate(model: type[SpecT], data: dict[str, Any], shown: str, origins: dict[str, str], skip: set[str]) -> SpecT:
    problems = []
    for path, value in non_finite(data):
        where, rest = (origins[str(path[0])], path[1:]) if str(path[0]) in origins else (shown, path)
        problems.append(
            f"{where}: {dotted(list(rest))}: {value} is not a finite number"
            if rest
            else f"{where}: {value} is not a finite number"
        )
    if problems:
        raise InvalidInput(problems)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        # a skipped field was already reported; its "required" line names its own file (no field) when it had one
        missing = [
            f"{origins[field]}: required" if field in origins else f"{shown}: {field}: required" for field in skip
        ]
        lines = [line for line in problems_of(error, model, shown, origins) if not line.startswith(tuple(missing))]
        raise InvalidInput(lines) from None


def resolve_experiment(
    data: Any, *, shown: str, base: Path, library: ConfigLibrary, overrides: dict[str, Any] | None = None
) -> Experiment:
    """Validate experiment data (from a file, stack config or flags), resolving its references first."""
    raw = dict(_mapping(data, shown, "experiment"))
    given = {key: value for key, value in (overrides or {}).items() if value is not None}
    raw.update(given)
    problems: list[str] = []
    # A problem with a value given on the command line names the flag, not the file.
    origins: dict[str, str] = {key: _flag(key) for key in given if key not in REFERENCE_FIELDS}
    unresolved: set[str] = set()
    for field, kind in REFERENCE_FIELDS.items():
        value = raw.get(field)
        if not isinstance(value, str):
            continue
        try:
            path = locate(value, kind, library, base=base, where=f"{shown}: {field}: ")
            raw[field] = read_document(path)
            origins[field] = display_path(path)
        except InvalidInput as error:
            problems.extend(error.problems)
            unresolved.add(field)
            raw.pop(field)
    translated = translate_references(raw, shown=shown, origins=origins)
    problems.extend(translated)
    unresolved.update(field for field in ("agent", "environment") if translated and field not in raw)
    try:
        experiment = _validate(Experiment, raw, shown, origins, unresolved)
    except InvalidInput as error:
        problems.extend(error.problems)
    if problems:
        raise InvalidInput(problems)
    return experiment


def resolve_cluster(data: Any, *, shown: str, overrides: dict[str, Any] | None = None) -> Cluster:
    """Validate cluster data (from a file, stack config or flags)."""
    raw = dict(_mapping(data, shown, "cluster"))
    given = {key: value for key, value in (overrides or {}).items() if value is not None}
    raw.update(given)
    return _validate(Cluster, raw, shown, {key: _flag(key) for key in given}, set())


def load_experiment(
    reference: str | Path, *, library: ConfigLibrary | None = None, overrides: dict[str, Any] | None = None
) -> Loaded[Experiment]:
    """An experiment from a file path or a name in the config library (``-f cartpole-ppo``)."""
    library = library or ConfigLibrary.for_project()
    path = locate(reference, "experiments", library, base=Path.cwd())
    shown = display_path(path)
    spec = resolve_experiment(read_document(path), shown=shown, base=path.parent, library=library, overrides=overrides)
    return Loaded(spec, path)


def load_cluster(
    reference: str | Path, *, library: ConfigLibrary | None = None, overrides: dict[str, Any] | None = None
) -> Loaded[Cluster]:
    """A cluster from a file path or a name in the config library (``-f single-node-gpu``)."""
    library = library or ConfigLibrary.for_project()
    path = locate(reference, "clusters", library, base=Path.cwd())
    return Loaded(resolve_cluster(read_document(path), shown=display_path(path), overrides=overrides), path)


FROM_FLAGS = "the command line"  # where problems of a spec made from flags alone are said to be
# The keys a spec made from flags alone cannot do without, and the flags (the original client's) that give them.
_EXPERIMENT_FLAGS = {"name": "--name (-n)", "agent": "--agent (-A)", "environment": "--environment (-E)"}
_CLUSTER_FLAGS = {"name": "--name (-n)", "machine_type": "--machine-type (-m)"}


def _require_flags(given: dict[str, Any], required: dict[str, str], what: str, example: str) -> None:
    missing = [flag for key, flag in required.items() if given.get(key) is None]
    if missing:
        raise InvalidInput(
            [f"{flag}: required for {what} made from flags alone (no -f SPEC)" for flag in missing],
            hint=f"for example `{example}`, or start from a spec with -f",
        )


def experiment_from_flags(overrides: dict[str, Any], *, library: ConfigLibrary | None = None) -> Experiment:
    """An experiment made from flags alone (the original client's ``experiment new -n NAME -A ... -E ...``):
    references resolve against the current folder and the config library, every other key takes its default."""
    _require_flags(
        overrides, _EXPERIMENT_FLAGS, "an experiment", "tfcli experiment new -n cp -A ppo -E cartpole -t 100000"
    )
    library = library or ConfigLibrary.for_project()
    return resolve_experiment({}, shown=FROM_FLAGS, base=Path.cwd(), library=library, overrides=overrides)


def cluster_from_flags(overrides: dict[str, Any]) -> Cluster:
    """A cluster made from flags alone (the original client's ``cluster create -n NAME -m TYPE -s SIZE -d DISK``)."""
    _require_flags(overrides, _CLUSTER_FLAGS, "a cluster", "tfcli cluster create -n my-cluster -m e2-standard-4 -s 2")
    return resolve_cluster({}, shown=FROM_FLAGS, overrides=overrides)


def is_experiment_document(data: Any) -> bool:
    """A cluster spec has no agent and no environment; anything else is read as an experiment."""
    return not (isinstance(data, dict) and "agent" not in data and "environment" not in data)


def load_any(reference: str | Path, *, library: ConfigLibrary | None = None) -> Loaded[Experiment] | Loaded[Cluster]:
    """An experiment or a cluster spec, told apart by its keys (for ``tfcli validate``)."""
    library = library or ConfigLibrary.for_project()
    path = Path(reference)
    if not path.is_file() and not looks_like_path(str(reference)):
        kinds = ("experiments", "clusters")
        found = next((hit for kind in kinds if (hit := library.find(kind, str(reference)))), None)
        if found is None:
            names = [name for kind in kinds for name in library.names(kind)]
            raise InvalidInput(
                f"{reference}: no such file, and no experiment or cluster spec of that name"
                f"{did_you_mean(str(reference), names)} in the library"
            )
        path = found
    data = read_document(path)
    if is_experiment_document(data):
        shown = display_path(path)
        return Loaded(resolve_experiment(data, shown=shown, base=path.parent, library=library), path)
    return Loaded(resolve_cluster(data, shown=display_path(path)), path)


def to_data(spec: BaseModel) -> dict[str, Any]:
    """The fully resolved spec as plain data (what stack config and ``experiment.yaml`` hold)."""
    return spec.model_dump(mode="json", exclude_none=True)


def to_yaml(spec: BaseModel) -> str:
    """The fully resolved spec as YAML, keys in the model's order."""
    return yaml.safe_dump(to_data(spec), sort_keys=False, default_flow_style=False, allow_unicode=True)
