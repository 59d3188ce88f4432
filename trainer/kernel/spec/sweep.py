"""The sweep file and its expansion into trials.

A sweep file (``configs/sweeps/<name>.yaml``, or ``experiments/<sweep>/sweep.yaml`` once created) holds::

    name: cartpole-lr            # trials are cartpole-lr-0, cartpole-lr-1, ...
    base: cartpole-ppo           # the experiment spec: a name, a path or an inline mapping
    axes:                        # dotted spec key -> the values to try (agent and environment arguments included)
      agent.learning_rate: [0.003, 0.001, 0.0003]
    seeds: 3                     # runs of each combination, with seeds 1..3
    random: null                 # N: try N combinations drawn from the grid instead of all of them
    random_seed: 0               # which N (the draw is reproducible)
    parallel: null               # trials at a time, locally and on GKE; --parallel overrides (spec/parallel.py)
    early_stop: null             # true or {reduction: 3, min_timesteps: T}: ASHA (spec/early_stop.py)
    max_cost: null               # dollars for all trials together, kept by the trials (spec/sweep_budget.py)

Trials are ordered combination by combination, seeds inside: trial ``k`` is combination ``k // seeds`` with seed
``k % seeds + 1``. On GKE trial ``k`` is the Indexed Job's completion index ``k``.
"""

from __future__ import annotations

import itertools
import math
import random as random_module
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError, field_validator, model_serializer
from pydantic_core.core_schema import SerializerFunctionWrapHandler

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.base import MAX_NAME_LENGTH, DnsName, StrictModel
from trainer.kernel.spec.early_stop import EarlyStopSettings, trial_early_stop
from trainer.kernel.spec.errors import problems_of
from trainer.kernel.spec.parallel import parallel_problem
from trainer.kernel.spec.sweep_axes import check_key, describe, numbers_as_numbers, set_dotted
from trainer.kernel.spec.sweep_budget import trial_sweep_budget

if TYPE_CHECKING:
    from trainer.kernel.spec.experiment import Experiment

MAX_TRIALS = 1000
# On GKE every trial's spec is one key of the sweep's ConfigMap (infra/sweep_manifests.py). The API server refuses a
# ConfigMap whose data values total more than corev1.MaxSecretSize, 1 MiB: its ConfigMap validation sums len(value)
# (UTF-8 bytes) over data and binaryData — keys are not counted.
CONFIG_MAP_LIMIT = 1024 * 1024


class SweepFile(StrictModel):
    """The sweep file's keys (``base`` stays raw here: the experiment loader resolves it)."""

    name: DnsName
    description: str = ""
    base: str | dict[str, Any]
    axes: dict[str, list[Any]] = Field(default_factory=dict)
    seeds: int = Field(default=1, ge=1, le=100)
    random: int | None = Field(default=None, ge=1)
    random_seed: int = Field(default=0, ge=0)
    parallel: int | None = None  # the default of both backends, checked by the rule of trainer/kernel/spec/parallel.py
    early_stop: EarlyStopSettings | None = None
    # Dollars for the whole sweep: each trial pauses once the sweep's trials have cost this much together.
    max_cost: float | None = Field(default=None, gt=0)

    @field_validator("early_stop", mode="before")
    @classmethod
    def _true_is_the_defaults(cls, value: Any) -> Any:
        """``early_stop: true`` is every default; ``false`` is none."""
        return {} if value is True else None if value is False else value

    @field_validator("parallel")
    @classmethod
    def _parallel(cls, value: int | None) -> int | None:
        problem = None if value is None else parallel_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_serializer(mode="wrap")
    def _without_unset_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A sweep without early stopping or a budget is written as before those keys existed (its sweep.yaml and
        stack config stay the same text, so an existing sweep still reads as the same definition)."""
        data: dict[str, Any] = handler(self)
        for key in ("early_stop", "max_cost"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

    @field_validator("axes")
    @classmethod
    def _values(cls, axes: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in axes.items():
            if not values:
                raise ValueError(f"{key}: give at least one value")
        return {key: [numbers_as_numbers(value) for value in values] for key, values in axes.items()}


@dataclass(frozen=True)
class Trial:
    """One run of a sweep: an ordinary experiment named ``<sweep>-<index>``."""

    index: int
    name: str
    combination: dict[str, Any]
    seed: int
    data: dict[str, Any]  # the trial's experiment spec as plain data (validated by :func:`validate_trials`)

    @property
    def label(self) -> str:
        return describe(self.combination)


def read_sweep_file(data: Any, shown: str) -> SweepFile:
    """Validate a sweep document; problems read ``<file>: <key>: <message>``."""
    if not isinstance(data, dict):
        raise InvalidInput(f"{shown}: expected a mapping of sweep keys (name, base, axes, seeds, ...)")
    try:
        sweep = SweepFile.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(problems_of(error, SweepFile, shown, {})) from None
    problems = []
    for key in sweep.axes:
        try:
            check_key(key, f"{shown}: axes")
        except InvalidInput as error:
            problems += error.problems
    if problems:
        raise InvalidInput(problems)
    return sweep


def is_sweep_document(data: Any) -> bool:
    """A sweep file has a ``base``; an experiment spec never does."""
    return isinstance(data, dict) and "base" in data


def grid_size(axes: dict[str, list[Any]]) -> int:
    return math.prod(len(values) for values in axes.values())


def combinations(sweep: SweepFile, shown: str) -> list[dict[str, Any]]:
    """Every combination of the axes (a grid), or ``random`` of them drawn without repeats, in grid order."""
    keys = list(sweep.axes)
    size = grid_size(sweep.axes)
    if sweep.random is None:
        indices: list[int] = list(range(size))
    else:
        if sweep.random > size:
            raise InvalidInput(f"{shown}: random: {sweep.random} combinations asked, but the grid has only {size}")
        indices = sorted(random_module.Random(sweep.random_seed).sample(range(size), sweep.random))
    grid = list(itertools.product(*(sweep.axes[key] for key in keys))) if size <= 100_000 else None
    chosen = []
    for index in indices:
        if grid is not None:
            values = grid[index]
        else:  # mixed-radix decoding, without building a huge grid
            values_list, rest = [], index
            for key in reversed(keys):
                rest, digit = divmod(rest, len(sweep.axes[key]))
                values_list.append(sweep.axes[key][digit])
            values = tuple(reversed(values_list))
        chosen.append(dict(zip(keys, values, strict=True)))
    return chosen


def varied(axes: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The axes that vary: a key given one value (``--set total_timesteps=24000``) is a constant of every trial,
    not an axis, wherever a sweep treats axes specially (early stopping's one budget for every trial)."""
    return {key: values for key, values in axes.items() if len(values) > 1}


def with_constants(base: dict[str, Any], axes: dict[str, list[Any]]) -> dict[str, Any]:
    """``base`` with every single-valued axis set in it, as each trial's spec has it (a key that cannot be set is
    left out here: :func:`expand` reports it for each trial)."""
    for key, values in axes.items():
        if len(values) == 1:
            try:
                base = set_dotted(base, key, values[0])
            except InvalidInput:
                continue
    return base


def trial_name(sweep: str, index: int) -> str:
    return f"{sweep}-{index}"


def expand(sweep: SweepFile, base: dict[str, Any], shown: str) -> list[Trial]:
    """The trials of ``sweep`` over the resolved ``base`` spec (plain data), unvalidated."""
    combos = combinations(sweep, shown)
    count = len(combos) * sweep.seeds
    if count > MAX_TRIALS:
        raise InvalidInput(f"{shown}: {count} trials; a sweep has at most {MAX_TRIALS} (use random: N)")
    longest = trial_name(sweep.name, count - 1)
    if len(longest) > MAX_NAME_LENGTH:
        raise InvalidInput(
            f"{shown}: name: trial names such as '{longest}' would be longer than {MAX_NAME_LENGTH} characters; "
            "use a shorter sweep name"
        )
    trials = []
    problems = []
    # Every trial reports the sweep's axes to TensorBoard's HParams dashboard (and what the base lists itself).
    hparams = list(dict.fromkeys([*sweep.axes, *(base.get("hparams") or [])]))
    early_stop = trial_early_stop(
        sweep.early_stop,
        sweep=sweep.name,
        combinations=len(combos),
        seeds=sweep.seeds,
        axes=varied(sweep.axes),
        base=with_constants(base, sweep.axes),
        shown=shown,
    )
    budget = trial_sweep_budget(sweep.max_cost, sweep=sweep.name, trials=count)
    for number, combination in enumerate(combos):
        # a base's early_stop or sweep_budget names another sweep
        data = {key: value for key, value in base.items() if key not in ("early_stop", "sweep_budget")}
        data["hparams"] = hparams
        if early_stop is not None:
            data["early_stop"] = early_stop
        if budget is not None:
            data["sweep_budget"] = budget
        for key, value in combination.items():
            try:
                data = set_dotted(data, key, value)
            except InvalidInput as error:
                problems += [
                    f"{shown}: trial {trial_name(sweep.name, number * sweep.seeds)}: {p}" for p in error.problems
                ]
        for seed in range(1, sweep.seeds + 1):
            index = number * sweep.seeds + seed - 1
            name = trial_name(sweep.name, index)
            note = f"sweep {sweep.name}: {describe(combination)}, seed {seed}"
            description = f"{base.get('description', '')} [{note}]".strip()
            trials.append(
                Trial(index, name, combination, seed, {**data, "name": name, "seed": seed, "description": description})
            )
    if problems:
        raise InvalidInput(problems)
    return trials


def validate_trials(trials: list[Trial], shown: str, base_dir: Path, library: Any = None) -> list[Any]:
    """Every trial validated before anything starts: all problems at once, each naming its trial and key.

    The base is resolved already, so names in it are looked up only when a ``library`` is given (a hand-written
    stack file may still name them)."""
    from trainer.kernel.spec.library import ConfigLibrary
    from trainer.kernel.spec.loader import resolve_experiment

    library = library or ConfigLibrary(())

    specs, problems = [], []
    for trial in trials:
        where = f"{shown}: trial {trial.name} ({trial.label}, seed {trial.seed})"
        try:
            specs.append(resolve_experiment(trial.data, shown=where, base=base_dir, library=library))
        except InvalidInput as error:
            problems += error.problems
    if problems:
        raise InvalidInput(problems)
    return specs


def trial_file(index: int | str) -> str:
    """Trial ``index``'s key in the sweep's ConfigMap, and its file under the pod's spec folder."""
    return f"trial-{index}.yaml"


def trials_data(specs: Sequence[Experiment]) -> dict[str, str]:
    """The sweep ConfigMap's data: ``trial-<k>.yaml`` -> trial ``k``'s resolved spec as YAML."""
    from trainer.kernel.spec.loader import to_yaml

    return {trial_file(index): to_yaml(spec) for index, spec in enumerate(specs)}


def config_map_size(data: Mapping[str, str]) -> int:
    """Bytes of a ConfigMap's data as Kubernetes counts them against :data:`CONFIG_MAP_LIMIT` (the values)."""
    return sum(len(value.encode()) for value in data.values())


def check_config_map(specs: Sequence[Experiment], shown: str) -> None:
    """Refuse trials whose ConfigMap Kubernetes would refuse (at ``pulumi up``, after the cluster was made)."""
    size = config_map_size(trials_data(specs))
    if size <= CONFIG_MAP_LIMIT:
        return
    fit = len(specs) * CONFIG_MAP_LIMIT // size
    raise InvalidInput(
        f"{shown}: axes, seeds: {len(specs)} trials make a {size:,}-byte ConfigMap of trial specs on GKE, over "
        f"Kubernetes' limit of {CONFIG_MAP_LIMIT:,} bytes (1 MiB); about {fit} such trials fit",
        hint="use fewer seeds or fewer values on an axis (or random: N), or split the sweep into several",
    )
