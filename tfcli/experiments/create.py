"""Making an experiment entry from a spec and command-line overrides."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

from tfcli.experiments.store import SWEEP_FILE, ExperimentDir, ExperimentStore
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import ConfigLibrary, load_experiment
from trainer.kernel.spec.loader import experiment_from_flags


def create_experiment(
    store: ExperimentStore,
    source: str | None,
    overrides: dict[str, Any],
    *,
    replace: bool = False,
    refuse_replacing: Callable[[ExperimentDir], None] | None = None,
) -> ExperimentDir:
    """Resolve ``source`` (a path or a library name; None: flags alone) with ``overrides`` and store it under its
    name.

    Starting the same spec again reuses its experiment (and so resumes it); a different spec under an existing
    name is refused unless ``replace``. The experiment's stack file ``stacks/Pulumi.<name>.yaml`` is written (or
    updated) beside it, so ``pulumi up -s NAME`` deploys it without tfcli (:mod:`tfcli.stackfiles.files`; no GCP
    project is needed for that). Replacing an existing experiment first calls ``refuse_replacing`` under its lock
    (``Backends.refuse_replacing``: none of it may run, here or on GKE), so a refused ``--restart`` changed nothing.
    """
    from tfcli.stackfiles.files import experiment_stack

    library = ConfigLibrary.for_project(store.project.root)
    if source is None:
        spec = experiment_from_flags(overrides, library=library)
    else:
        spec = load_experiment(source, library=library, overrides=overrides).spec
    experiment = store.dir(spec.name)
    if (experiment.root / SWEEP_FILE).is_file():
        raise InvalidInput(f"-n/name: '{spec.name}' is a sweep's name; pick another experiment name")
    owner = store.sweep_owning(spec.name)
    if owner:
        raise InvalidInput(
            f"-n/name: '{spec.name}' is a name of sweep '{owner}''s trials; pick another experiment name"
        )
    stack = experiment_stack(store.project, spec)  # refuses a name a shared cluster's stack already has
    made = not experiment.root.exists()
    try:
        with experiment.locked():
            if replace and refuse_replacing is not None and experiment.exists():
                refuse_replacing(experiment)
            written = store.write(spec, replace=replace)
            stack.file.write()
            return written
    except BaseException:
        if made:  # nothing half-made (a folder holding only .lock, on a full disk): the folder is this call's own
            shutil.rmtree(experiment.root, ignore_errors=True)
        raise
