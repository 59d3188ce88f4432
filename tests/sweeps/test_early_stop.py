"""Early stopping's rules without training: where the rungs fall, who goes on at a rung, how a trial finds its
siblings in both layouts, what each trial's spec gets, and the bad input refused (exit 2 naming the flag)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_kit import invoke

from tfcli.sweeps.create import SweepOptions, plan_sweep
from trainer.hooks.early_stop import early_stopping, sibling_folder, trial_score
from trainer.kernel.errors import InvalidInput
from trainer.kernel.scores import final_score, score_before
from trainer.kernel.spec import ConfigLibrary
from trainer.kernel.spec.early_stop import EarlyStopSettings
from trainer.kernel.spec.library import BUNDLED_CONFIGS
from trainer.kernel.spec.sweep import read_sweep_file
from trainer.kernel.state import Episode, RunState
from trainer.rung_scores import publish
from trainer.rungs import judge
from trainer.signals import StopRequest

LIBRARY = ConfigLibrary((BUNDLED_CONFIGS,))


def plan(**options: object):  # type: ignore[no-untyped-def]
    return plan_sweep("cartpole-lr", SweepOptions(**options), LIBRARY)  # type: ignore[arg-type]


def test_rungs_fall_at_min_timesteps_times_reduction_powers_below_the_budget() -> None:
    stop = plan(early_stop=True).trials[4].data["early_stop"]  # budget 40,000; default reduction 3
    assert stop == {
        "sweep": "cartpole-lr", "trials": 9, "seeds": 3, "reduction": 3, "rungs": [4445, 13335], "recheck_seconds": 5.0
    }  # fmt: skip
    assert plan(reduction=2, min_timesteps=5000).trials[0].data["early_stop"]["rungs"] == [5000, 10000, 20000]
    assert "early_stop" not in plan().trials[0].data  # off unless asked
    specs = plan(early_stop=True).specs
    assert specs[8].early_stop is not None and specs[8].early_stop.combinations()[2] == [
        "cartpole-lr-6",
        "cartpole-lr-7",
        "cartpole-lr-8",
    ]


def test_a_combination_goes_on_only_in_the_top_fraction_of_those_at_the_rung() -> None:
    scores = {0: 20.0, 1: 180.0, 2: 150.0, 3: 90.0}
    kept = [own for own in scores if (verdict := judge(own, scores, 3)) is not None and verdict.goes_on]
    assert kept == [1]  # the top 1/3 of 4 is one
    assert [own for own in scores if judge(own, scores, 2).goes_on] == [1, 2]  # type: ignore[union-attr]
    verdict = judge(0, scores, 3)
    assert verdict is not None and verdict.reason(2667, 3) == (
        "IQM 20.0 at 2,667 timesteps, below the top 1/3 (4 combinations at this rung)"
    )
    assert judge(0, {0: 20.0, 1: 180.0}, 3) is None  # fewer than `reduction` there: not decided yet
    assert judge(0, {0: 5.0, 1: 5.0}, 2).goes_on  # type: ignore[union-attr]  # a tie goes on


def test_scores_at_a_rung_use_only_the_episodes_before_it() -> None:
    steps, returns = np.array([10, 50, 95, 100, 140]), np.array([1.0, 2.0, 3.0, 4.0, 99.0])
    assert score_before(steps, returns, 100) == 3.5  # 95 and 100 are in the last 10% of 100
    assert score_before(steps, returns, 60) == 2.0  # none in [54, 60]: the last episode before it
    assert score_before(steps, returns, 5) is None
    assert final_score(steps, returns) == 99.0


def write_progress(folder: Path, returns: list[float], length: int = 10, rungs: tuple[int, ...] = ()) -> None:
    """A trial's progress; with ``rungs``, a sibling that passed them (and published its scores there, as its own
    hook does)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        Episode(worker=0, episode=i, timesteps=i * length, length=length, wall_seconds=0.0, episode_return=r).as_json()
        for i, r in enumerate(returns, start=1)
    ]
    (folder / "progress.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for rung in rungs:
        publish(folder, rung, trial_score(folder, rung, reached=True))


@pytest.mark.parametrize(
    ("layout", "own"),
    [("experiments/{t}/results", "experiments/s-1/results"), ("results/s/{t}", "results/s/s-1")],
    ids=["local", "gke"],
)
def test_a_trial_prunes_itself_from_its_siblings_folders_in_either_layout(
    tmp_path: Path, layout: str, own: str
) -> None:
    spec = plan_sweep(
        "cartpole-lr", SweepOptions(name="s", seeds=1, reduction=2, min_timesteps=100), LIBRARY
    ).specs  # 3 combinations x 1 seed: s-0, s-1, s-2
    assert sibling_folder(tmp_path / own, "s-1", "s-2") == tmp_path / layout.format(t="s-2")
    for trial, level in (("s-0", 100.0), ("s-1", 5.0), ("s-2", 50.0)):
        write_progress(tmp_path / layout.format(t=trial), [level] * 10, rungs=() if trial == "s-1" else (100,))
    stop = StopRequest()
    hook = early_stopping(spec[1].early_stop, "s-1", tmp_path / own, stop, RunState())
    assert hook is not None
    hook.after_step(RunState(timesteps=100))
    assert hook.scores(100) == {0: 100.0, 1: 5.0, 2: 50.0}
    assert stop.requested and hook.pruned == "IQM 5.0 at 100 timesteps, below the top 1/2 (3 combinations at this rung)"
    assert trial_score(tmp_path / layout.format(t="s-0"), 101) is None  # not there yet
    resumed = early_stopping(spec[1].early_stop, "s-1", tmp_path / own, StopRequest(), RunState(timesteps=150))
    assert resumed is not None
    resumed.after_step(RunState(timesteps=160))
    assert resumed.pruned is None  # rungs behind a resumed run are not judged again
    assert early_stopping(spec[1].early_stop, "s-1", tmp_path / "elsewhere", StopRequest(), RunState()) is None


def test_a_rung_too_few_combinations_reached_is_judged_again_as_others_arrive(tmp_path: Path) -> None:
    spec = plan_sweep("cartpole-lr", SweepOptions(name="s", seeds=1, reduction=2, min_timesteps=100), LIBRARY).specs
    folder = tmp_path / "s-0"
    write_progress(folder, [5.0] * 10)  # the hopeless one gets there first
    stop = StopRequest()
    hook = early_stopping(spec[0].early_stop, "s-0", folder, stop, RunState())
    assert hook is not None
    hook.after_step(RunState(timesteps=100))
    assert not stop.requested  # alone at the rung: it goes on
    write_progress(tmp_path / "s-1", [100.0] * 10, rungs=(100,))
    hook.judge()
    assert stop.requested and "(2 combinations at this rung)" in str(hook.pruned)


def test_a_pruned_trial_trained_on_is_not_judged_again_even_after_a_pause(tmp_path: Path) -> None:
    """Only ``resume --include-pruned`` trains a pruned trial again: its early stop is off for good (a marker file
    keeps it off once its ``result.json`` no longer says pruned: a preempted extension resumes)."""
    spec = plan_sweep("cartpole-lr", SweepOptions(name="s", seeds=1, reduction=2, min_timesteps=100), LIBRARY).specs
    for trial, level in (("s-0", 100.0), ("s-1", 5.0), ("s-2", 50.0)):
        write_progress(tmp_path / trial, [level] * 10)
    own = tmp_path / "s-1"
    assert early_stopping(spec[1].early_stop, "s-1", own, StopRequest(), RunState(timesteps=50)) is not None
    (own / "result.json").write_text(json.dumps({"status": "pruned", "timesteps": 50, "reason": "IQM 5.0 at ..."}))
    assert early_stopping(spec[1].early_stop, "s-1", own, StopRequest(), RunState(timesteps=50)) is None
    assert json.loads((own / "early_stop_released").read_text()) == {"pruned": "IQM 5.0 at ...", "timesteps": 50}
    (own / "result.json").write_text(json.dumps({"status": "paused", "timesteps": 70, "reason": "SIGTERM"}))
    assert early_stopping(spec[1].early_stop, "s-1", own, StopRequest(), RunState(timesteps=70)) is None
    (tmp_path / "s-2" / "result.json").write_text(json.dumps({"status": "paused", "timesteps": 70}))
    assert early_stopping(spec[2].early_stop, "s-2", tmp_path / "s-2", StopRequest(), RunState()) is not None


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--early-stop", "-n", "one", "--set", "agent.learning_rate=0.001"], "--early-stop"),
        (["--reduction", "1"], "--reduction"),
        (["--early-stop", "--min-timesteps", "50000"], "--min-timesteps"),
    ],
    ids=["one-combination", "reduction-1", "min-timesteps-above-budget"],
)
def test_bad_early_stop_input_exits_2_naming_the_flag(lab: Path, args: list[str], flag: str) -> None:
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "cartpole-lr", "--no-build", *args)
    assert code == 2, stdout + stderr
    assert flag in stderr
    assert not (lab / "experiments" / "cartpole-lr").exists() and not (lab / "experiments" / "one").exists()


def test_the_sweep_files_early_stop_key(tmp_path: Path) -> None:
    base = {"name": "b", "base": "cartpole-ppo", "axes": {"agent.learning_rate": [0.1, 0.2]}}
    assert read_sweep_file({**base, "early_stop": True}, "s.yaml").early_stop == EarlyStopSettings()
    assert "early_stop" not in read_sweep_file(base, "s.yaml").model_dump()  # old sweeps read and write as before
    with pytest.raises(InvalidInput, match=r"s\.yaml: early_stop\.reduction"):
        read_sweep_file({**base, "early_stop": {"reduction": 1}}, "s.yaml")
    episodes = tmp_path / "sweep.yaml"
    episodes.write_text(
        "name: e\nbase: {name: e, environment: cartpole, agent: ppo, episodes: 10}\n"
        "axes: {agent.learning_rate: [0.1, 0.2]}\nearly_stop: true\n"
    )
    with pytest.raises(InvalidInput, match=r"early_stop \(--early-stop\): rungs are in timesteps"):
        plan_sweep(str(episodes), SweepOptions(), LIBRARY)


def test_a_single_valued_set_is_a_constant_not_an_axis() -> None:
    """``--set total_timesteps=24000`` gives every trial the same budget: the rungs fall inside it (issue 28)."""
    planned = plan(sets=["total_timesteps=24000"], early_stop=True)
    assert {trial.data["total_timesteps"] for trial in planned.trials} == {24000}
    assert planned.trials[0].data["early_stop"]["rungs"] == [2667, 8001]  # 24,000 / 3², rounded up; x 3
    with pytest.raises(InvalidInput, match="do not sweep total_timesteps"):
        plan(sets=["total_timesteps=24000,30000"], early_stop=True)
