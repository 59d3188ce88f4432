"""The pure rules of ``resume`` (tfcli/runs/resuming.py), on made-up member statuses: which members a resume holds,
which a raised budget extends, what it refuses and says. The commands that carry the plan out are tested in
test_resume_extend.py, test_resume_pruned.py and tests/sweeps/test_sweep_resume.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tfcli.experiments.status import Status
from tfcli.experiments.store import ExperimentDir, ExperimentStore
from tfcli.project import Project, ProjectDir
from tfcli.runs.resuming import ResumeOptions, ResumePlan, check_experiment_resumable, plan_resume
from tfcli.runs.run import Run
from tfcli.sweeps.store import SweepDir
from trainer.kernel.errors import InvalidInput, TfcliError

NONE = ResumeOptions()


def status(name: str, state: str, timesteps: int = 0, episodes: int = 0) -> Status:
    return Status(name, "local", "local", state, timesteps, episodes, "", None, None, None, None, None, "")


def experiment(tmp_path: Path, spec: str = "total_timesteps: 1000\n") -> Run:
    """An experiment run whose stored resolved spec is ``spec`` (only its budget keys are read)."""
    store = ExperimentStore(ProjectDir(tmp_path, Project(name="t")))
    folder = ExperimentDir(tmp_path / "experiments" / "e")
    folder.root.mkdir(parents=True)
    folder.spec_file.write_text(spec)
    return Run(store, folder)


def sweep(tmp_path: Path) -> Run:
    return Run(ExperimentStore(ProjectDir(tmp_path, Project(name="t"))), SweepDir(tmp_path / "experiments" / "s"))


def test_options_give_the_raised_budget_as_spec_keys() -> None:
    assert NONE.budget == {}
    assert ResumeOptions(total_timesteps=5).budget == {"total_timesteps": 5}
    assert ResumeOptions(episodes=7).budget == {"episodes": 7}
    assert ResumeOptions(total_timesteps=5, episodes=7).budget == {"total_timesteps": 5, "episodes": 7}
    assert not ResumePlan().extends and ResumePlan(ResumeOptions(episodes=1)).extends


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (ResumeOptions(total_timesteps=0), "--total-timesteps: at least 1, got 0"),
        (ResumeOptions(episodes=-3), "--episodes: at least 1, got -3"),
        (
            ResumeOptions(include_pruned=True),
            "--include-pruned: extends pruned trials' budget; give --total-timesteps N or --episodes N with it",
        ),
    ],
)
def test_bad_flags_are_refused_before_anything(tmp_path: Path, options: ResumeOptions, says: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        plan_resume(sweep(tmp_path), [], options)
    assert str(raised.value).startswith(says)


def test_the_smallest_budget_and_include_pruned_with_one_pass() -> None:
    ResumeOptions(total_timesteps=1, episodes=1).check()
    ResumeOptions(include_pruned=True, episodes=1).check()
    NONE.check()


MEMBERS = [
    (0, status("s-0", "completed", 1000)),
    (1, status("s-1", "failed", 40)),
    (2, status("s-2", "pruned", 100)),
    (3, status("s-3", "paused", 300)),
    (4, status("s-4", "new")),
    (5, status("s-5", "failed", 10)),
]


def test_a_plain_resume_of_a_sweep_holds_failed_and_pruned_trials_and_says_so(tmp_path: Path) -> None:
    plan = plan_resume(sweep(tmp_path), MEMBERS, NONE, "paused")
    assert plan.held == (1, 2, 5) and plan.extended == () and plan.state == "paused" and plan.options == NONE
    assert plan.notes == (
        "2 failed trial(s) left as they are (s-1, s-5); --retry-failed runs them again from their last checkpoint",
        "1 pruned trial(s) left as they are (s-2); --include-pruned with --total-timesteps/--episodes continues them",
    )


@pytest.mark.parametrize("state", ["failed", "pruned"])
def test_a_note_names_at_most_four_trials(tmp_path: Path, state: str) -> None:
    members = [(k, status(f"s-{k}", state)) for k in range(6)]
    (note,) = plan_resume(sweep(tmp_path), members, NONE).notes
    assert note.startswith(f"6 {state} trial(s) left as they are (s-0, s-1, s-2, s-3); ")


def test_retry_failed_trains_the_failed_trials_again(tmp_path: Path) -> None:
    plan = plan_resume(sweep(tmp_path), MEMBERS, ResumeOptions(retry_failed=True))
    assert plan.held == (2,) and len(plan.notes) == 1 and plan.notes[0].startswith("1 pruned")


def test_a_failed_experiment_is_not_held(tmp_path: Path) -> None:
    """Only a sweep's failed trials wait for --retry-failed: a failed experiment is resumed like a paused one."""
    plan = plan_resume(experiment(tmp_path), [(0, status("e", "failed", 40))], NONE)
    assert plan.held == () and plan.notes == ()


def test_a_raised_budget_extends_completed_members_and_with_include_pruned_pruned_ones(tmp_path: Path) -> None:
    run = experiment(tmp_path)
    options = ResumeOptions(total_timesteps=5000)
    plan = plan_resume(run, [(0, status("e", "completed", 1000, 12))], options)
    assert plan.extended == ("e",) and plan.held == () and plan.extends
    assert plan.notes == ("budget raised to timesteps 5,000: 1 finished run(s) continue from their last checkpoint",)
    plan = plan_resume(run, [(0, status("e", "pruned", 300))], options)
    assert plan.held == (0,) and plan.extended == ()
    plan = plan_resume(run, [(0, status("e", "pruned", 300))], dataclasses.replace(options, include_pruned=True))
    assert plan.held == () and plan.extended == ("e",) and len(plan.notes) == 1


def test_without_a_raised_budget_a_completed_member_is_neither_held_nor_extended(tmp_path: Path) -> None:
    plan = plan_resume(experiment(tmp_path), [(0, status("e", "completed", 1000))], NONE)
    assert plan.held == () and plan.extended == () and plan.notes == ()


def test_both_budgets_raised_are_named_in_the_note(tmp_path: Path) -> None:
    run = experiment(tmp_path, "total_timesteps: 1000\nepisodes: 50\n")
    options = ResumeOptions(total_timesteps=2000, episodes=90)
    plan = plan_resume(run, [(0, status("e", "completed", 1000, 20))], options)
    assert plan.notes == (
        "budget raised to timesteps 2,000, episodes 90: 1 finished run(s) continue from their last checkpoint",
    )


def test_a_budget_of_a_kind_the_spec_does_not_count_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as raised:
        plan_resume(experiment(tmp_path), [(0, status("e", "completed", 1000))], ResumeOptions(episodes=50))
    assert str(raised.value) == (
        "--episodes: e's budget is counted in timesteps (total_timesteps: 1000); extend it with --total-timesteps N "
        "(a budget of another kind is not added to it)"
    )
    run = experiment(tmp_path / "b", "episodes: 40\n")
    with pytest.raises(InvalidInput, match=r"^--total-timesteps: e's budget is counted in episodes \(episodes: 40\)"):
        plan_resume(run, [(0, status("e", "completed", 1000, 40))], ResumeOptions(total_timesteps=5000))


@pytest.mark.parametrize("raised", [1000, 999])
def test_a_budget_not_above_what_a_member_reached_is_refused(tmp_path: Path, raised: int) -> None:
    with pytest.raises(InvalidInput) as refused:
        plan_resume(experiment(tmp_path), [(0, status("e", "completed", 1000))], ResumeOptions(total_timesteps=raised))
    assert str(refused.value) == (
        f"--total-timesteps: {raised:,} is not above the 1,000 timesteps e reached; extending needs a larger budget"
    )


def test_an_episode_budget_not_above_what_was_reached_is_refused_in_episodes(tmp_path: Path) -> None:
    run = experiment(tmp_path, "episodes: 40\n")
    with pytest.raises(InvalidInput, match=r"^--episodes: 40 is not above the 40 episodes e reached"):
        plan_resume(run, [(0, status("e", "completed", 9999, 40))], ResumeOptions(episodes=40))
    plan = plan_resume(run, [(0, status("e", "completed", 9999, 40))], ResumeOptions(episodes=41))
    assert plan.extended == ("e",)


def test_a_member_that_also_reached_the_budget_not_raised_must_have_it_raised_too(tmp_path: Path) -> None:
    run = experiment(tmp_path, "total_timesteps: 1000\nepisodes: 50\n")
    member = [(0, status("e", "completed", 800, 50))]  # ended on its episodes
    with pytest.raises(InvalidInput) as raised:
        plan_resume(run, member, ResumeOptions(total_timesteps=2000))
    assert str(raised.value) == (
        "--total-timesteps: e also reached its 50 episodes (episodes); raise it too with --episodes N"
    )
    assert plan_resume(run, member, ResumeOptions(total_timesteps=2000, episodes=60)).extended == ("e",)


def test_members_that_train_on_anyway_are_checked_against_the_raised_budget_too(tmp_path: Path) -> None:
    """A paused member is under its budget: it passes; one that (oddly) reached the raised budget is refused."""
    run = experiment(tmp_path)
    options = ResumeOptions(total_timesteps=5000)
    assert plan_resume(run, [(0, status("e", "paused", 600))], options).extended == ()
    with pytest.raises(InvalidInput, match="not above the 6,000 timesteps f reached"):
        plan_resume(run, [(0, status("e", "paused", 600)), (1, status("f", "paused", 6000))], options)


RESUMABLE = ("paused", "interrupted")


@pytest.mark.parametrize("state", RESUMABLE)
def test_an_experiment_resumes_from_its_backends_resumable_states(tmp_path: Path, state: str) -> None:
    check_experiment_resumable(experiment(tmp_path), state, RESUMABLE, None)
    check_experiment_resumable(experiment(tmp_path / "b"), state, RESUMABLE, ResumePlan())


@pytest.mark.parametrize(
    ("state", "hint"),
    [
        ("completed", "`tfcli experiment resume -e e --total-timesteps N` (or --episodes N) trains it on"),
        ("pruned", "`tfcli experiment resume -e e --include-pruned --total-timesteps N` trains it on"),
        ("running", None),
        ("failed", None),
    ],
)
def test_any_other_state_is_refused_with_how_it_goes_on(tmp_path: Path, state: str, hint: str | None) -> None:
    with pytest.raises(TfcliError) as raised:
        check_experiment_resumable(experiment(tmp_path), state, RESUMABLE, ResumePlan())
    assert str(raised.value) == f"experiment 'e' is {state}; only a paused or interrupted run can resume"
    assert raised.value.hint == hint


@pytest.mark.parametrize("state", ["completed", "pruned"])
def test_a_finished_experiment_resumes_when_the_plan_raises_its_budget_and_holds_nothing(
    tmp_path: Path, state: str
) -> None:
    run = experiment(tmp_path)
    raising = ResumePlan(ResumeOptions(total_timesteps=5000))
    check_experiment_resumable(run, state, RESUMABLE, raising)
    with pytest.raises(TfcliError):
        check_experiment_resumable(run, state, RESUMABLE, dataclasses.replace(raising, held=(0,)))
    with pytest.raises(TfcliError):
        check_experiment_resumable(run, "failed", RESUMABLE, raising)


@pytest.mark.parametrize("make", [experiment, sweep])
def test_a_stopped_run_resumes_only_when_asked_for(tmp_path: Path, make: object) -> None:
    run = make(tmp_path)  # type: ignore[operator]
    members = [(0, status("e", "stopped", 600))]
    with pytest.raises(InvalidInput) as raised:
        plan_resume(run, members, NONE, "stopped")
    assert str(raised.value) == f"{run.kind} '{run.name}' was stopped, which ends it for good; resume does not " + (
        "continue it unasked"
    )
    assert (
        raised.value.hint == f"`tfcli experiment resume {run.flag} --after-stop` continues it from its last checkpoint"
    )
    assert plan_resume(run, members, ResumeOptions(after_stop=True), "stopped").held == ()
    assert plan_resume(run, [(0, status("e", "paused", 600))], NONE, "paused").held == ()
