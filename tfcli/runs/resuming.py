"""``resume``: which members of a run train again, and a raised budget written into the run's resolved specs — one
plan for both backends (``tfcli.backends`` makes it from the run's status; each backend carries it out).

- A run that ``stop`` ended is refused (exit 2) unless ``--after-stop`` asks for it: stop means for good.
- A plain resume continues what did not end: paused, interrupted, stopped and new members. Failed trials of a sweep
  are left failed (``--retry-failed`` runs them again, from their newest checkpoint), pruned ones pruned.
- ``--total-timesteps N`` / ``--episodes N`` raise the budget of the run (a sweep has one budget: every trial's spec
  gets it). Completed members — and pruned ones with ``--include-pruned`` — then continue from their final checkpoint
  and train exactly the rest (docs/design.md §6.4); the budget must be above what each of them reached, and of a kind
  the spec already counts (``total_timesteps`` or ``episodes``: a budget of the other kind is not added).
- What is left as it ended is *held*: the local queue does not launch it; on GKE the new Job has no slot (no pod)
  for it, nor for a completed member whose budget stays (``finished``; infra/sweep_manifests.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tfcli.experiments.spec_view import SpecView
from tfcli.experiments.status import Status
from tfcli.experiments.store import ExperimentDir
from tfcli.runs.run import Run
from trainer.kernel.budget import Budget
from trainer.kernel.errors import InvalidInput, TfcliError

FLAGS = {"total_timesteps": "--total-timesteps", "episodes": "--episodes"}
UNITS = {"total_timesteps": "timesteps", "episodes": "episodes"}
UNFINISHED = ("paused", "pausing", "interrupted", "stopped", "new", "unknown")


@dataclass(frozen=True)
class ResumeOptions:
    """What ``resume`` may be told beyond the run."""

    retry_failed: bool = False
    include_pruned: bool = False
    total_timesteps: int | None = None
    episodes: int | None = None
    after_stop: bool = False  # `stop` ends a run for good: only `resume --after-stop` continues it

    @property
    def budget(self) -> dict[str, int]:
        """The raised budget as spec keys (empty: not extended)."""
        given = {"total_timesteps": self.total_timesteps, "episodes": self.episodes}
        return {key: value for key, value in given.items() if value is not None}

    def check(self) -> None:
        from trainer.kernel.spec.experiment import (  # the spec models: not for every `list`
            MAX_BUDGET,
            budget_over_limit,
        )

        for key, value in self.budget.items():
            if value < 1:
                raise InvalidInput(f"{FLAGS[key]}: at least 1, got {value}")
            if value > MAX_BUDGET:
                raise InvalidInput(f"{FLAGS[key]}: {budget_over_limit(value)}")
        if self.include_pruned and not self.budget:
            raise InvalidInput(
                "--include-pruned: extends pruned trials' budget; give --total-timesteps N or --episodes N with it"
            )


@dataclass(frozen=True)
class ResumePlan:
    """What a resume does: the members left as they ended (``held``: sweep trial indexes), the members whose budget
    was raised (``extended``), what the command says about it (``notes``) and the run's state when it was made
    (``state``: read once, so that a GKE backend does not read its bucket and cluster again to check it)."""

    options: ResumeOptions = field(default_factory=ResumeOptions)
    held: tuple[int, ...] = ()
    extended: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    state: str | None = None
    # Pruned members that train on (``--include-pruned``, by index in the run's members): each backend writes
    # ``early_stop_released`` into their results (trainer/ended.py ``release``) before anything runs them.
    released: tuple[int, ...] = ()
    # Completed members whose budget stays (by index): nothing to train; a GKE sweep's new Job gives them no pod.
    finished: tuple[int, ...] = ()

    @property
    def extends(self) -> bool:
        return bool(self.options.budget)


def _spec_budget(run: Run) -> dict[str, int | None]:
    """The run's budgets by spec key (a sweep's are its base's: every trial has them)."""
    if run.kind == "sweep":
        base = run.sweep().definition().base
        return SpecView(base if isinstance(base, dict) else {}).budget
    return run.experiment().spec_view().budget


def _check_budget(run: Run, options: ResumeOptions, training: list[Status]) -> None:
    """Bad input, exit 2 naming the flag: a budget kind the spec does not count, or one not above what a member
    that trains on reached."""
    spec = _spec_budget(run)
    for key in options.budget:
        if spec.get(key) is None:
            other = next(k for k in FLAGS if k != key)
            raise InvalidInput(
                f"{FLAGS[key]}: {run.name}'s budget is counted in {UNITS[other]} ({other}: {spec.get(other)}); "
                f"extend it with {FLAGS[other]} N (a budget of another kind is not added to it)"
            )
    raised = {**{k: spec.get(k) for k in FLAGS}, **options.budget}
    budget = Budget(episodes=raised["episodes"], timesteps=raised["total_timesteps"])
    for status in training:
        reached = {"timesteps": status.timesteps, "episodes": status.episodes}
        if not budget.reached_by(reached):
            continue
        for key, value in options.budget.items():
            done = reached["timesteps" if key == "total_timesteps" else "episodes"]
            if value <= done:
                raise InvalidInput(
                    f"{FLAGS[key]}: {value:,} is not above the {done:,} {UNITS[key]} {status.name} reached; "
                    f"extending needs a larger budget"
                )
        other = next(k for k in FLAGS if k not in options.budget)
        raise InvalidInput(
            f"{FLAGS[next(iter(options.budget))]}: {status.name} also reached its {raised[other]:,} {UNITS[other]} "
            f"({other}); raise it too with {FLAGS[other]} N"
        )


def plan_resume(
    run: Run, members: list[tuple[int, Status]], options: ResumeOptions, run_state: str | None = None
) -> ResumePlan:
    """The plan for resuming ``run`` whose members (trial index, status) are as given; checks the flags against them
    (``InvalidInput``) before anything is written."""
    options.check()
    if run_state == "stopped" and not options.after_stop:
        raise InvalidInput(
            f"{run.kind} '{run.name}' was stopped, which ends it for good; resume does not continue it unasked",
            hint=f"`tfcli experiment resume {run.flag} --after-stop` continues it from its last checkpoint",
        )
    sweep = run.kind == "sweep"
    held: list[int] = []
    extended: list[str] = []
    training: list[Status] = []
    failed: list[str] = []
    pruned: list[str] = []
    released: list[int] = []
    finished: list[int] = []
    for index, status in members:
        state = status.state
        if state == "failed" and sweep and not options.retry_failed:
            held.append(index)
            failed.append(status.name)
        elif state == "pruned" and not options.include_pruned:
            held.append(index)
            pruned.append(status.name)
        elif state in ("completed", "pruned"):
            if options.budget:
                extended.append(status.name)
                training.append(status)
                released += [index] if state == "pruned" else []
            else:
                finished.append(index)
        else:
            training.append(status)
    if options.budget:
        _check_budget(run, options, training)
    notes = []
    if failed:
        notes.append(
            f"{len(failed)} failed trial(s) left as they are ({', '.join(failed[:4])}); --retry-failed runs them "
            "again from their last checkpoint"
        )
    if pruned:
        notes.append(
            f"{len(pruned)} pruned trial(s) left as they are ({', '.join(pruned[:4])}); --include-pruned with "
            "--total-timesteps/--episodes continues them"
        )
    if extended:
        budget = ", ".join(f"{UNITS[k]} {v:,}" for k, v in options.budget.items())
        notes.append(f"budget raised to {budget}: {len(extended)} finished run(s) continue from their last checkpoint")
    return ResumePlan(options, tuple(held), tuple(extended), tuple(notes), run_state, tuple(released), tuple(finished))


def released_members(run: Run, plan: ResumePlan) -> list[ExperimentDir]:
    """The members ``plan`` releases from their pruning (their folders: local results, or a GKE bucket prefix)."""
    if run.kind == "experiment":
        return [run.experiment()] if plan.released else []
    return [run.store.dir(trial.name) for trial in run.trials() if trial.index in plan.released]


def write_budget(run: Run, plan: ResumePlan) -> None:
    """The raised budget in the run's resolved specs: ``experiment.yaml`` (every trial's), a sweep's ``sweep.yaml``,
    and the stack file (``tfcli:experiment`` or ``tfcli:sweep``, from which a GKE sweep's ConfigMap is made)."""
    sync_sweep_budget(run)
    if not plan.extends:
        return
    from tfcli.stackfiles.files import experiment_stack
    from tfcli.stackfiles.sweep import sweep_stack
    from tfcli.sweeps.store import sweep_yaml
    from trainer.kernel.files import atomic_write_text
    from trainer.kernel.spec.loader import to_yaml

    budget = plan.options.budget
    with run.locked():
        for member in run.members():
            spec = member.spec().model_copy(update=budget)
            atomic_write_text(member.spec_file, to_yaml(spec))
            if run.kind == "experiment":
                experiment_stack(run.project, spec).file.write()
        if run.kind == "sweep":
            folder = run.sweep()
            definition = folder.definition()
            assert isinstance(definition.base, dict)
            raised = definition.model_copy(update={"base": {**definition.base, **budget}})
            atomic_write_text(folder.sweep_file, sweep_yaml(raised))
            sweep_stack(run.project, raised).write()


def sync_sweep_budget(run: Run) -> None:
    """A sweep's ``max_cost`` as ``sweep.yaml`` has it now (raised by the user to continue the trials it paused),
    written into every trial's ``experiment.yaml`` (``sweep_budget``), which the local queue's trainers read; a GKE
    sweep's trials get it from the stack file, made from ``sweep.yaml`` at every start."""
    if run.kind != "sweep":
        return
    from trainer.kernel.files import atomic_write_text
    from trainer.kernel.spec.loader import to_yaml
    from trainer.kernel.spec.sweep_budget import SweepBudget, trial_sweep_budget

    definition = run.sweep().definition()
    members = run.members()
    data = trial_sweep_budget(definition.max_cost, sweep=run.name, trials=len(members))
    budget = SweepBudget.model_validate(data) if data is not None else None
    with run.locked():
        for member in members:
            spec = member.spec()
            if spec.sweep_budget != budget:
                atomic_write_text(member.spec_file, to_yaml(spec.model_copy(update={"sweep_budget": budget})))


def check_experiment_resumable(run: Run, state: str, resumable: tuple[str, ...], plan: ResumePlan | None) -> None:
    """The one rule for an experiment, whatever its backend: it resumes from one of the backend's ``resumable``
    states, or completed (pruned) when ``plan`` raises its budget; otherwise a ``TfcliError`` saying how it goes on."""
    if plan is not None and plan.extends and state in ("completed", "pruned") and not plan.held:
        return
    if state not in resumable:
        raise TfcliError(
            f"experiment '{run.name}' is {state}; only a paused or interrupted run can resume",
            hint=_extend_hint(run, state),
        )


def _extend_hint(run: Run, state: str) -> str | None:
    """How a finished run goes on: a raised budget."""
    if state == "completed":
        return f"`tfcli experiment resume {run.flag} --total-timesteps N` (or --episodes N) trains it on"
    if state == "pruned":
        return f"`tfcli experiment resume {run.flag} --include-pruned --total-timesteps N` trains it on"
    return None
