"""``tfcli experiment`` commands that need no training run: creation, listing, and every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tfcli.cli.app import app

runner = CliRunner()


def test_new_writes_the_resolved_spec_with_flag_overrides(project: Path) -> None:
    result = runner.invoke(
        app,
        ["experiment", "new", "-f", "cartpole-ppo", "-n", "cp2", "--run-mode", "multi-threaded", "-w", "4",
         "--total-timesteps", "5000", "--seed", "7", "--summary-frequency", "1000t", "--agent", "vpg"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    spec = yaml.safe_load((project / "experiments" / "cp2" / "experiment.yaml").read_text())
    assert (spec["name"], spec["run_mode"], spec["num_workers"], spec["total_timesteps"]) == (
        "cp2",
        "multi-threaded",
        4,
        5000,
    )
    assert spec["seed"] == 7 and spec["summary_frequency"] == "1000t" and spec["agent"]["agent"] == "vpg"
    assert spec["environment"]["level"] == "CartPole-v1"


def test_list_and_status_of_a_new_experiment(project: Path) -> None:
    assert runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo"]).exit_code == 0
    listed = runner.invoke(app, ["experiment", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    (entry,) = json.loads(listed.stdout)
    assert (entry["name"], entry["backend"], entry["run_mode"], entry["state"]) == (
        "cartpole-ppo",
        "local",
        "multi-threaded",
        "new",
    )
    assert entry["progress"] == 0.0
    table = runner.invoke(app, ["experiment", "list"])
    assert "cartpole-ppo" in table.stdout and "new" in table.stdout
    status = runner.invoke(app, ["experiment", "status", "-e", "cartpole-ppo"])
    assert "cartpole-ppo (multi-threaded, local): new" in status.stdout


def test_same_spec_again_is_reused_but_a_different_one_is_refused(project: Path) -> None:
    assert runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo"]).exit_code == 0
    assert runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo"]).exit_code == 0
    before = (project / "experiments" / "cartpole-ppo" / "experiment.yaml").read_text()
    changed = runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo", "--episodes", "3"])
    assert changed.exit_code == 1
    assert "already exists with a different spec" in changed.stderr
    assert (project / "experiments" / "cartpole-ppo" / "experiment.yaml").read_text() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["new", "-f", "cartpole-ppo", "-w", "0", "--run-mode", "distributed"],
            "--num-workers: run_mode distributed needs num_workers >= 1",
        ),
        (["new", "-f", "cartpole-ppo", "--run-mode", "parallel"], "--run-mode: got 'parallel'"),
        (["new", "-f", "cartpole-ppo", "--saver-frequency", "10x"], "--saver-frequency: '10x' is not a frequency"),
        (["new", "-f", "cartpole-ppo", "-n", "Bad_Name"], "--name: 'Bad_Name' is not a valid name"),
        (["new", "-f", "cartpole-ppo", "--agent", "ppo3"], "agent: no agent named 'ppo3'"),
        (["new", "-f", "no-such-experiment"], "no experiment named 'no-such-experiment'"),
        (["new", "-f", "missing/file.yaml"], "no such file: missing/file.yaml"),
        (["start"], "give exactly one of -e NAME"),
        (["start", "-e", "x", "-f", "cartpole-ppo"], "give exactly one of -e NAME"),
        (["start", "-e", "nope"], "no experiment named 'nope'"),
        (["status", "-e", "Bad Name"], "experiment name: 'Bad Name' is not a valid name"),
        (["plot", "-e", "nope"], "no experiment named 'nope'"),
    ],
)
def test_bad_input_exits_2_names_the_field_and_writes_nothing(project: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["experiment", *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert not any((project / "experiments").iterdir())


def test_commands_outside_a_project_say_how_to_make_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["experiment", "list"])
    assert result.exit_code == 1
    assert "not inside a tfcli project" in result.stderr and "tfcli init" in result.stderr


def test_plot_without_episodes_is_a_clear_error(project: Path) -> None:
    assert runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo"]).exit_code == 0
    result = runner.invoke(app, ["experiment", "plot", "-e", "cartpole-ppo"])
    assert result.exit_code == 1
    assert "no finished episodes to plot yet" in result.stderr


def test_pause_and_logs_of_an_experiment_that_never_ran(project: Path) -> None:
    assert runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo"]).exit_code == 0
    assert "is not running" in runner.invoke(app, ["experiment", "pause", "-e", "cartpole-ppo"]).stderr
    assert "has no trainer.log yet" in runner.invoke(app, ["experiment", "logs", "-e", "cartpole-ppo"]).stderr
