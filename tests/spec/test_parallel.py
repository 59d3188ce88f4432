"""A sweep's trials at a time has one rule (trainer/kernel/spec/parallel.py), the same for ``--parallel`` locally and on
GKE, for ``render -s``, the sweep file's ``parallel`` and the stack key ``tfcli:parallelism``; and one resolution:
the flag (or the stack key that carries it) over the sweep file's value, else the backend's default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli_kit import invoke
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.parallel import MIN_PARALLEL, checked_parallel, parallel_problem, resolved_parallel


@pytest.mark.parametrize("value", [None, 1, 2, 256, 1000])
def test_a_count_of_one_or_more_or_none_is_taken_as_it_is(value: int | None) -> None:
    assert checked_parallel(value) == value and MIN_PARALLEL == 1


@pytest.mark.parametrize("value", [0, -3])
def test_fewer_than_one_is_refused_naming_the_flag(value: int) -> None:
    with pytest.raises(InvalidInput) as refused:
        checked_parallel(value)
    assert refused.value.message == f"--parallel: at least 1, got {value}"


def test_elsewhere_it_names_where_it_was_given() -> None:
    with pytest.raises(InvalidInput) as refused:
        checked_parallel(0, "Pulumi.lr.yaml: tfcli:parallelism")
    assert refused.value.message == "Pulumi.lr.yaml: tfcli:parallelism: at least 1, got 0"


def test_the_problem_is_said_once_for_every_place() -> None:
    assert parallel_problem(1) is None and parallel_problem(1000) is None
    assert parallel_problem(0) == "at least 1, got 0"


def test_the_flag_wins_over_the_sweep_file_and_neither_leaves_the_default() -> None:
    assert resolved_parallel(3, 2) == 3
    assert resolved_parallel(1, 4) == 1
    assert resolved_parallel(None, 2) == 2
    assert resolved_parallel(None, None) is None


def test_a_bad_value_is_refused_naming_where_it_was_given() -> None:
    with pytest.raises(InvalidInput) as refused:
        resolved_parallel(0, 2)
    assert refused.value.message == "--parallel: at least 1, got 0"
    with pytest.raises(InvalidInput) as refused:
        resolved_parallel(0, None, given_where="Pulumi.lr.yaml: tfcli:parallelism")
    assert refused.value.message == "Pulumi.lr.yaml: tfcli:parallelism: at least 1, got 0"
    with pytest.raises(InvalidInput) as refused:
        resolved_parallel(None, -1, file="experiments/lr/sweep.yaml")
    assert refused.value.message == "experiments/lr/sweep.yaml: parallel: at least 1, got -1"
    with pytest.raises(InvalidInput) as refused:
        resolved_parallel(None, 0)
    assert refused.value.message == "the sweep file: parallel: at least 1, got 0"
    assert resolved_parallel(2, 0) == 2  # a file value the flag overrides is not what runs


def test_the_sweep_file_keeps_the_same_rule(lab: Path) -> None:
    sweep = yaml.safe_load((lab / "configs" / "sweeps" / "cartpole-lr.yaml").read_text())
    (lab / "none.yaml").write_text(yaml.safe_dump({**sweep, "name": "none", "parallel": MIN_PARALLEL - 1}))
    code, _, stderr = invoke("experiment", "sweep", "-f", "none.yaml", "--no-build")
    assert code == 2 and "none.yaml: parallel: at least 1, got 0" in stderr and "Traceback" not in stderr
    assert not (lab / "experiments" / "none").exists() and not (lab / "stacks" / "Pulumi.none.yaml").exists()
    (lab / "one.yaml").write_text(yaml.safe_dump({**sweep, "name": "one", "parallel": MIN_PARALLEL}))
    assert invoke("experiment", "sweep", "-f", "one.yaml", "--no-build")[0] == 0
    # `experiment sweep -p N` writes the file's value: its mistake names the flag
    code, _, stderr = invoke("experiment", "sweep", "-f", "one.yaml", "-n", "flag", "-p", "0", "--no-build")
    assert code == 2 and "--parallel: at least 1, got 0" in stderr and not (lab / "experiments" / "flag").exists()


def test_a_local_start_refuses_it_before_anything_runs(lab: Path) -> None:
    assert invoke("experiment", "sweep", "-f", "cartpole-lr", "--no-build")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-s", "cartpole-lr", "--local", "--parallel", "0")
    assert code == 2 and "--parallel: at least 1, got 0" in stderr and "Traceback" not in stderr
    assert not (lab / "experiments" / "cartpole-lr" / "run.json").exists()
    code, stdout, _ = invoke("experiment", "status", "-s", "cartpole-lr", "--json")
    assert code == 0 and json.loads(stdout)["state"] == "new"
