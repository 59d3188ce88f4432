"""A sweep's trials at a time has one rule (trainer/kernel/spec/parallel.py), the same for ``--parallel`` locally and on
GKE, for ``render -s``/``plan -s``, the sweep file's ``parallel`` and the stack key ``tfcli:parallelism``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli_kit import invoke
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.parallel import MIN_PARALLEL, checked_parallel


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


def test_the_sweep_file_keeps_the_same_lower_bound(lab: Path) -> None:
    sweep = yaml.safe_load((lab / "configs" / "sweeps" / "cartpole-lr.yaml").read_text())
    (lab / "none.yaml").write_text(yaml.safe_dump({**sweep, "name": "none", "parallel": MIN_PARALLEL - 1}))
    code, _, stderr = invoke("experiment", "sweep", "-f", "none.yaml", "--no-build")
    assert code == 2 and "none.yaml: parallel:" in stderr and not (lab / "experiments" / "none").exists()
    (lab / "one.yaml").write_text(yaml.safe_dump({**sweep, "name": "one", "parallel": MIN_PARALLEL}))
    assert invoke("experiment", "sweep", "-f", "one.yaml", "--no-build")[0] == 0


def test_a_local_start_refuses_it_before_anything_runs(lab: Path) -> None:
    assert invoke("experiment", "sweep", "-f", "cartpole-lr", "--no-build")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-s", "cartpole-lr", "--local", "--parallel", "0")
    assert code == 2 and "--parallel: at least 1, got 0" in stderr and "Traceback" not in stderr
    assert not (lab / "experiments" / "cartpole-lr" / "run.json").exists()
    code, stdout, _ = invoke("experiment", "status", "-s", "cartpole-lr", "--json")
    assert code == 0 and json.loads(stdout)["state"] == "new"
