"""Stack config of a sweep stack: ``tfcli:sweep`` (the sweep as ``experiments/<sweep>/sweep.yaml`` holds it: the
resolved base spec, the axes, the seeds) instead of ``tfcli:experiment``; every other key as an experiment stack's
(:mod:`infra.stack_config`), validated by the same code: the first trial stands in for the experiment there.

``tfcli:parallelism`` sets the trials at a time, over the sweep's own ``parallel``; without either, what the learner
pool holds at its largest (:func:`trainer.kernel.spec.parallel.resolved_parallel`: the rule ``start -s`` follows locally
and on GKE, so ``pulumi up -s SWEEP`` alone deploys what tfcli would). ``tfcli:heldTrials`` (``"1,4"``) and
``tfcli:rerun`` (a whole number) are what ``resume -s`` sets: the trials its new Job leaves as they ended (completed,
pruned, failed: they get no slot of the Job, infra/sweep_manifests.py), and a count that changes the Job's digest, so
that a Job that ended (``Failed``, ``Complete``) is replaced by one that runs the unfinished trials.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.stack_config import StackSettings, config_int, config_mapping, config_where, settings_from_config
from trainer.kernel.config_keys import (
    CLUSTER_KEY,
    EXPERIMENT_KEY,
    HELD_TRIALS_KEY,
    PARALLELISM_KEY,
    RERUN_KEY,
    SWEEP_KEY,
)
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import ConfigLibrary, Experiment
from trainer.kernel.spec.parallel import resolved_parallel


@dataclass(frozen=True)
class SweepSettings:
    """A validated sweep stack: the experiment-stack settings (of trial 0), the sweep's name, trials, parallelism."""

    settings: StackSettings
    name: str
    trials: list[Experiment]
    parallelism: int
    held: tuple[int, ...] = ()
    rerun: int = 0


def held_trials(stack: str, value: Any, trials: int) -> tuple[int, ...]:
    """``tfcli:heldTrials``: trial indexes, ``"1,4"`` (a list is taken too)."""
    parts = value if isinstance(value, list) else str(value or "").split(",")
    try:
        held = sorted({int(str(part).strip()) for part in parts if str(part).strip()})
    except ValueError:
        raise InvalidInput(f"{config_where(stack, HELD_TRIALS_KEY)}: expected trial indexes such as 1,4") from None
    if held and not 0 <= held[0] <= held[-1] < trials:
        raise InvalidInput(f"{config_where(stack, HELD_TRIALS_KEY)}: the sweep's trials are 0 .. {trials - 1}")
    return tuple(held)


def is_sweep_config(config: Mapping[str, Any]) -> bool:
    return config.get(SWEEP_KEY) is not None


def sweep_settings_from_config(config: Mapping[str, Any], *, stack: str, transport_token: Any = None) -> SweepSettings:
    """Validate a sweep stack's config; every mistake is an :class:`InvalidInput` naming the stack file and key."""
    from infra.sizing import default_parallelism
    from trainer.kernel.spec.sweep import check_config_map, expand, read_sweep_file, validate_trials

    where = config_where(stack, SWEEP_KEY)
    if config.get(EXPERIMENT_KEY) is not None or config.get(CLUSTER_KEY) is not None:
        raise InvalidInput(
            f"Pulumi.{stack}.yaml: a sweep stack sets {SWEEP_KEY} only, not tfcli:experiment or tfcli:cluster"
        )
    sweep = read_sweep_file(config_mapping(stack, SWEEP_KEY, config.get(SWEEP_KEY)), where)
    if not isinstance(sweep.base, dict):
        raise InvalidInput(f"{where}: base: expected the resolved experiment spec (a mapping), as tfcli writes it")
    if sweep.name != stack:
        raise InvalidInput(f"{where}: name: '{sweep.name}' differs from the stack's name '{stack}'")
    trials = validate_trials(expand(sweep, sweep.base, where), where, Path.cwd(), ConfigLibrary.for_project())
    distributed = [trial.name for trial in trials if trial.run_mode == "distributed"]
    if distributed:
        raise InvalidInput(
            f"{where}: run_mode: trials {', '.join(distributed[:3])} are distributed; a sweep on GKE runs single or "
            "multi-threaded trials (one pod each); run a distributed sweep locally"
        )
    check_config_map(trials, where)  # Kubernetes would refuse the ConfigMap at `pulumi up`, after the cluster is made
    settings = settings_from_config(
        {**config, EXPERIMENT_KEY: trials[0].model_dump(mode="json", exclude_none=True), SWEEP_KEY: None},
        stack=stack,
        transport_token=transport_token,
    )
    parallelism = resolved_parallel(
        config_int(stack, PARALLELISM_KEY, config.get(PARALLELISM_KEY)),
        sweep.parallel,
        given_where=config_where(stack, PARALLELISM_KEY),
        file=where,
    )
    held = held_trials(stack, config.get(HELD_TRIALS_KEY), len(trials))
    rerun = config_int(stack, RERUN_KEY, config.get(RERUN_KEY)) or 0
    return SweepSettings(settings, sweep.name, trials, parallelism or default_parallelism(trials), held, rerun)


def read_sweep_config() -> SweepSettings:
    """This sweep stack's config, through Pulumi (read by :func:`infra.stack_config.read_config_values`)."""
    import pulumi

    from infra.stack_config import read_config_values

    config = read_config_values((SWEEP_KEY, PARALLELISM_KEY, HELD_TRIALS_KEY, RERUN_KEY))
    return sweep_settings_from_config(config, stack=pulumi.get_stack())
