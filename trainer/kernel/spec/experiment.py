"""The Experiment spec: what to train, how long, in which run mode, and where (the original client's keywords)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from trainer.kernel.spec.agent import AgentSpec, NetworkSpec
from trainer.kernel.spec.base import DnsName, StrictModel, raise_problems
from trainer.kernel.spec.cluster import Cluster
from trainer.kernel.spec.early_stop import TrialEarlyStop
from trainer.kernel.spec.environment import EnvironmentSpec
from trainer.kernel.spec.frequency import Frequency, SummaryFrequency
from trainer.kernel.spec.recording import AgentSummary, Recording
from trainer.kernel.spec.sweep_axes import get_dotted
from trainer.kernel.spec.sweep_budget import SweepBudget
from trainer.kernel.spec.ttl import Ttl

RunMode = Literal["single", "multi-threaded", "distributed"]
RUN_MODES: tuple[str, ...] = ("single", "multi-threaded", "distributed")
# The fields whose value may be a name (looked up in the config library), a path, or an inline mapping.
REFERENCE_FIELDS = {"environment": "environments", "agent": "agents", "network": "networks", "cluster": "clusters"}

# Defaults that depend on the run mode (the original client's, except summaries: docs/reference.md, "Defaults changed").
_SAVER_DEFAULT = {"distributed": "600s", "other": "100e"}
_SUMMARY_DEFAULT = {"distributed": "120s", "other": "10s"}
# The largest budget (timesteps or episodes): a million million, years of training on any machine. A larger number is
# a typo (an extra 0, `1e15`), refused before it is written anywhere rather than discovered as a run that never ends.
MAX_BUDGET = 10**12
# HParams names that are not spec keys: settings the spec implies.
DERIVED_HPARAMS = ("num_environments",)


class Experiment(StrictModel):
    """One experiment. Budgets (``episodes``, ``total_timesteps``) count across all workers."""

    name: DnsName
    description: str = ""
    environment: EnvironmentSpec
    agent: AgentSpec
    network: NetworkSpec | None = None
    cluster: Cluster | None = None
    episodes: int | None = Field(default=None, ge=1)
    total_timesteps: int | None = Field(default=None, ge=1)
    max_timesteps_per_episode: int | None = Field(default=None, ge=1)
    deterministic: bool = False
    repeat_actions: int = Field(default=1, ge=1, le=1000)
    debug_logging: bool = False
    run_mode: RunMode = "single"
    num_workers: int = Field(default=3, ge=0, le=1024)
    environments_per_worker: int = Field(default=1, ge=1, le=256)
    num_parameter_servers: int = Field(default=1, ge=0)
    saver_frequency: Frequency | None = None
    summary_frequency: SummaryFrequency | None = None
    seed: int | None = Field(default=None, ge=0, le=2**32 - 1)
    # Dollars: on GKE the trainer pauses itself once its run has cost this much (trainer/hooks/cost_limit.py).
    max_cost: float | None = Field(default=None, gt=0)
    # On GKE: the longest its stack stays up after a start; `tfcli experiment reap` stops it past that
    # (trainer/kernel/spec/ttl.py). Runs that ended (completed, paused at max_cost) are reaped whatever their ttl.
    ttl: Ttl | None = None
    # Seconds an environment may take to answer a reset or a step (a dead env-worker never answers): past it the
    # run fails, its checkpoints kept, with one line naming the environment (trainer/stall.py).
    step_timeout: float = Field(default=300.0, gt=0, le=86400)
    # The return that counts as solved; sweeps report the time each combination takes to reach it, and the trainer
    # its run's time to reach it as a TensorBoard HParams metric.
    target_return: float | None = None
    # Dotted spec keys whose values TensorBoard's HParams dashboard shows for this run (trainer/hooks/hparams.py);
    # unset: the main settings. A sweep sets it to its axes, so that every trial reports what the sweep varies.
    hparams: list[str] | None = None
    # Set by a sweep with early stopping (trainer/kernel/spec/early_stop.py): the trial prunes itself at its rungs.
    early_stop: TrialEarlyStop | None = None
    # Set by a sweep with a max_cost (trainer/kernel/spec/sweep_budget.py): the trial pauses once the sweep has cost
    # that.
    sweep_budget: SweepBudget | None = None
    # What a TensorForce agent file's saver, summarizer and recorder said (trainer/kernel/spec/tensorforce_forms.py):
    # the newest complete checkpoints kept (None: 3), TensorForce's own summaries written (None: the trainer's
    # choice, trainer/agents.py), and episode traces recorded under results/traces/.
    keep_checkpoints: int | None = Field(default=None, ge=1, le=1000)
    agent_summaries: list[AgentSummary] | None = None
    record: Recording | None = None

    @field_validator("episodes", "total_timesteps")
    @classmethod
    def _bounded_budget(cls, value: int | None) -> int | None:
        if value is not None and value > MAX_BUDGET:
            raise ValueError(budget_over_limit(value))
        return value

    @field_validator("num_parameter_servers")
    @classmethod
    def _one_learner(cls, value: int) -> int:
        if value > 1:
            raise ValueError(
                f"got {value}, but TensorForce 0.6 trains one central model, so there is exactly one learner "
                "(the one 'parameter server'): use 0 or 1"
            )
        return value

    @model_validator(mode="after")
    def _cross_field_rules(self) -> Experiment:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        if self.episodes is None and self.total_timesteps is None:
            problems.append(
                (("episodes",), "set a budget: episodes, total_timesteps or both (training stops at the first reached)")
            )
        if self.run_mode != "single" and self.num_workers < 1:
            what = "environment-worker processes" if self.run_mode == "distributed" else "parallel environments"
            problems.append(
                (("num_workers",), f"run_mode {self.run_mode} needs num_workers >= 1 ({what}), got {self.num_workers}")
            )
        if self.environments_per_worker > 1 and self.run_mode != "distributed":
            problems.append(
                (
                    ("environments_per_worker",),
                    f"only a distributed run has environment workers (this run_mode is {self.run_mode}): "
                    "set num_workers to the number of environments instead",
                )
            )
        if self.early_stop is not None and self.total_timesteps is None:
            problems.append((("early_stop",), "early stopping's rungs are in timesteps: set total_timesteps"))
        problems += self._hparams_problems()
        raise_problems("Experiment", problems)
        mode = "distributed" if self.run_mode == "distributed" else "other"
        if self.saver_frequency is None:
            object.__setattr__(self, "saver_frequency", Frequency.parse(_SAVER_DEFAULT[mode]))
        if self.summary_frequency is None:
            object.__setattr__(self, "summary_frequency", Frequency.parse(_SUMMARY_DEFAULT[mode]))
        return self

    def _hparams_problems(self) -> list[tuple[tuple[str | int, ...], str]]:
        """Each ``hparams`` key names a value this spec sets (or a derived setting such as num_environments)."""
        if not self.hparams:
            return []
        data = self.model_dump(mode="json")  # null values included: a sweep may try `null` on an axis
        problems: list[tuple[tuple[str | int, ...], str]] = []
        for index, key in enumerate(self.hparams):
            if key in DERIVED_HPARAMS:
                continue
            try:
                get_dotted(data, key)
            except KeyError:
                problems.append(
                    (
                        ("hparams", index),
                        f"'{key}' is not set in this spec: list dotted keys it sets (e.g. agent.learning_rate, "
                        f"run_mode) or {', '.join(DERIVED_HPARAMS)}",
                    )
                )
        return problems

    @property
    def num_environments(self) -> int:
        """How many environments step at once: 1 in single mode, ``num_workers`` in multi-threaded mode and
        ``num_workers * environments_per_worker`` in distributed mode."""
        if self.run_mode == "single":
            return 1
        return self.num_workers * (self.environments_per_worker if self.run_mode == "distributed" else 1)


def budget_over_limit(value: int) -> str:
    """What a budget over :data:`MAX_BUDGET` is told (the spec's field and ``resume``'s flags)."""
    return f"got {value:,}; at most {MAX_BUDGET:,} (10^12, years of training on any machine): is there a 0 too many?"
