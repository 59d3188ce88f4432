"""Making a sweep: its file (or an experiment spec plus ``--set``/``--seeds``/``--random``), every trial validated
before anything is written, then ``experiments/<sweep>/sweep.yaml`` and one ordinary experiment per trial."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfcli.experiments.store import ExperimentStore
from tfcli.stackfiles.sweep import sweep_stack
from tfcli.sweeps.store import SweepDir, refuse_clash, sweep_dir, sweep_yaml
from trainer.kernel.errors import InvalidInput
from trainer.kernel.files import atomic_write_text
from trainer.kernel.spec import ConfigLibrary, Experiment, to_data
from trainer.kernel.spec.documents import display_path, read_document
from trainer.kernel.spec.library import looks_like_path
from trainer.kernel.spec.loader import locate, resolve_experiment
from trainer.kernel.spec.parallel import checked_parallel
from trainer.kernel.spec.sweep import (
    SweepFile,
    Trial,
    check_config_map,
    expand,
    is_sweep_document,
    read_sweep_file,
    validate_trials,
)
from trainer.kernel.spec.sweep_axes import check_key, parse_set


@dataclass(frozen=True)
class SweepOptions:
    """What the command line adds to (or says instead of) a sweep file."""

    name: str | None = None
    sets: tuple[str, ...] = ()
    seeds: int | None = None
    random: int | None = None
    random_seed: int | None = None
    parallel: int | None = None
    early_stop: bool | None = None  # --early-stop / --no-early-stop (None: as the sweep file says)
    reduction: int | None = None  # --reduction (implies --early-stop)
    min_timesteps: int | None = None  # --min-timesteps (implies --early-stop)


@dataclass(frozen=True)
class Planned:
    """A validated sweep: its definition (base resolved inline), its trials and their specs."""

    sweep: SweepFile
    trials: list[Trial]
    specs: list[Experiment]
    shown: str


def _source(reference: str, library: ConfigLibrary) -> Path:
    if looks_like_path(reference) or Path(reference).is_file():
        return locate(reference, "experiments", library, base=Path.cwd())
    return library.find("sweeps", reference) or library.require("experiments", reference, where="--file: ")


def _merged(data: dict[str, Any], options: SweepOptions, default_name: str) -> dict[str, Any]:
    merged = dict(data)
    axes = dict(merged.get("axes") or {})
    for option in options.sets:
        key, values = parse_set(option)
        check_key(key, f"--set {option}")
        axes[key] = values
    merged["axes"] = axes
    given = {
        "name": options.name, "seeds": options.seeds, "random": options.random,
        "random_seed": options.random_seed, "parallel": options.parallel,
    }  # fmt: skip
    merged.update({key: value for key, value in given.items() if value is not None})
    merged.setdefault("name", default_name)
    _early_stop(merged, options)
    return merged


def _early_stop(merged: dict[str, Any], options: SweepOptions) -> None:
    """``--early-stop``, ``--reduction`` and ``--min-timesteps`` over the file's ``early_stop`` (either of the last
    two turns early stopping on; ``--no-early-stop`` turns it off)."""
    if options.reduction is not None and options.reduction < 2:
        raise InvalidInput(
            f"--reduction: at least 2 (a rung keeps the top 1/REDUCTION of its combinations), got {options.reduction}"
        )
    if options.min_timesteps is not None and options.min_timesteps < 1:
        raise InvalidInput(f"--min-timesteps: at least 1, got {options.min_timesteps}")
    if options.early_stop is False:
        merged["early_stop"] = None
        return
    given = {"reduction": options.reduction, "min_timesteps": options.min_timesteps}
    given = {key: value for key, value in given.items() if value is not None}
    if not (options.early_stop or given):
        return
    current = merged.get("early_stop")
    merged["early_stop"] = {**(current if isinstance(current, dict) else {}), **given}


def plan_sweep(reference: str, options: SweepOptions, library: ConfigLibrary, *, for_gke: bool = False) -> Planned:
    """Resolve and validate a sweep from a sweep file or an experiment spec (``-f``) and the options. ``for_gke``: it
    will run on GKE, so its trials must also fit one ConfigMap (the sweep stack checks that again, for any sweep)."""
    checked_parallel(options.parallel)  # the flag's mistake names the flag, not the file it is written into
    path = _source(reference, library)
    shown = display_path(path)
    data = read_document(path)
    if is_sweep_document(data):
        merged = _merged(data, options, default_name=path.stem)
        base_reference: Any = merged["base"]
    else:
        if not isinstance(data, dict):
            raise InvalidInput(f"{shown}: expected a mapping of experiment keys")
        merged = _merged({"base": str(path)}, options, default_name=f"{data.get('name', path.stem)}-sweep")
        base_reference = None
    sweep = read_sweep_file(merged, shown)
    if base_reference is None:
        base = resolve_experiment(data, shown=shown, base=path.parent, library=library)
    elif isinstance(base_reference, dict):
        base = resolve_experiment(base_reference, shown=f"{shown}: base", base=path.parent, library=library)
    else:
        base_path = locate(base_reference, "experiments", library, base=path.parent, where=f"{shown}: base: ")
        base = resolve_experiment(
            read_document(base_path), shown=display_path(base_path), base=base_path.parent, library=library
        )
    resolved = sweep.model_copy(update={"base": to_data(base)})
    trials = expand(resolved, to_data(base), shown)
    specs = validate_trials(trials, shown, path.parent)
    if for_gke:
        check_config_map(specs, shown)
    return Planned(resolved, trials, specs, shown)


def build_trials(planned: Planned) -> list[str]:
    """The trainer's build-and-step for one trial of each combination (what differs between seeds is only the seed):
    every problem named with its trial, or the lines saying what was built."""
    from tfcli.experiments.preflight import build_experiments

    lines, problems = [], []
    seeds = planned.sweep.seeds
    chosen = list(zip(planned.trials, planned.specs, strict=True))[::seeds]
    built = build_experiments([(spec, f"{planned.shown}: trial {trial.name}") for trial, spec in chosen])
    for (trial, _), answer in zip(chosen, built, strict=False):  # a child that died answers for one trial only
        if isinstance(answer, InvalidInput):
            problems += answer.problems
        else:
            lines.append(f"{trial.label}: {answer}")
    if problems:
        raise InvalidInput(problems)
    return lines


def refuse_taken_name(store: ExperimentStore, planned: Planned, *, replace: bool = False) -> None:
    """Invalid input (exit 2) when the sweep's name or its trials' names are taken: by an experiment, another
    sweep, a stack, or this sweep with a different definition (unless ``replace``). Cheap and file-only, so the CLI
    asks it before building any combination: a name clash costs no TensorFlow start."""
    refuse_clash(store, planned.sweep)
    sweep_stack(store.project, planned.sweep)  # refuses a name an experiment's or cluster's stack has
    sweep = sweep_dir(store, planned.sweep.name)
    if sweep.exists() and not replace and sweep.sweep_file.read_text() != sweep_yaml(planned.sweep):
        raise InvalidInput(
            f"-n/name: sweep '{sweep.name}' already exists with a different definition "
            f"({display_path(sweep.sweep_file)})",
            hint="pick another name with -n, or start over with --restart (deletes its trials' results)",
        )


def create_sweep(
    store: ExperimentStore,
    planned: Planned,
    *,
    replace: bool = False,
    refuse_replacing: Callable[[SweepDir], None] | None = None,
) -> SweepDir:
    """Write ``experiments/<sweep>/sweep.yaml`` and every trial's ``experiment.yaml``.

    The same sweep again is reused (and so continues); a different one under an existing name is refused unless
    ``replace``. Trials get no stack files of their own: on GKE the whole sweep is one stack. Replacing an existing
    sweep first calls ``refuse_replacing`` under the sweep's lock (the backends' check that none of it runs, here or
    on GKE: ``Backends.refuse_replacing``), so a refused ``--restart`` has changed nothing.
    """
    sweep = sweep_dir(store, planned.sweep.name)
    refuse_taken_name(store, planned, replace=replace)
    stack = sweep_stack(store.project, planned.sweep)
    text = sweep_yaml(planned.sweep)
    folders = [sweep.root, *(store.dir(spec.name).root for spec in planned.specs)]
    made = [folder for folder in folders if not folder.exists()]
    try:
        with sweep.locked():
            if replace and sweep.exists() and refuse_replacing is not None:
                refuse_replacing(sweep)
            if replace and sweep.exists():  # its trials by folder: the old sweep.yaml may be hand-edited
                for name in store.names():
                    if store.sweep_owning(name) == sweep.name:
                        _remove_extra(store, name, {t.name for t in planned.trials})
            for spec in planned.specs:
                experiment = store.dir(spec.name)
                with experiment.locked():
                    store.write(spec, replace=replace)
            atomic_write_text(sweep.sweep_file, text)
            stack.write()
    except BaseException:
        import shutil

        for folder in made:  # nothing half-made (a full disk): the folders this call made go again
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return sweep


def _remove_extra(store: ExperimentStore, name: str, keep: set[str]) -> None:
    """A trial of the old definition that the new one does not have: its folder goes."""
    import shutil

    if name not in keep:
        shutil.rmtree(store.dir(name).root, ignore_errors=True)
