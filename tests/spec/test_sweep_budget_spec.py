"""A sweep's ``max_cost``: bad values are refused naming the file and the key, every trial's spec carries the sweep's
budget (what the trainer keeps), and a sweep without one is written as before the key existed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_kit import invoke

from tfcli.sweeps.create import SweepOptions, plan_sweep
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import ConfigLibrary
from trainer.kernel.spec.library import BUNDLED_CONFIGS
from trainer.kernel.spec.sweep import read_sweep_file
from trainer.kernel.spec.sweep_budget import SweepBudget

LIBRARY = ConfigLibrary((BUNDLED_CONFIGS,))
SWEEP = """\
name: lr
base: cartpole-ppo
axes: {agent.learning_rate: [0.001, 0.0003]}
seeds: 2
"""


@pytest.mark.parametrize("value", ["0", "-2", ".nan", ".inf", "ten dollars"])
def test_a_bad_sweep_max_cost_is_refused_naming_the_file_and_key(value: str) -> None:
    with pytest.raises(InvalidInput) as error:
        read_sweep_file(yaml.safe_load(SWEEP + f"max_cost: {value}\n"), "sweeps/lr.yaml")
    assert any(problem.startswith("sweeps/lr.yaml: max_cost: ") for problem in error.value.problems), error.value


def test_the_cli_refuses_it_with_exit_2_and_writes_nothing(lab: Path) -> None:
    (lab / "lr.yaml").write_text(SWEEP + "max_cost: -1\n")
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "lr.yaml", "--no-build")
    assert code == 2, stdout + stderr
    assert "lr.yaml: max_cost: " in stderr and "Traceback" not in stderr
    assert not (lab / "experiments" / "lr").exists()


def test_every_trial_carries_the_sweeps_budget(tmp_path: Path) -> None:
    (tmp_path / "lr.yaml").write_text(SWEEP + "max_cost: 12.5\n")
    planned = plan_sweep(str(tmp_path / "lr.yaml"), SweepOptions(), LIBRARY)
    assert planned.sweep.max_cost == 12.5
    budget = SweepBudget(sweep="lr", trials=4, max_cost=12.5)
    assert [spec.sweep_budget for spec in planned.specs] == [budget] * 4
    assert budget.siblings("lr-1") == ["lr-0", "lr-2", "lr-3"]
    assert "max_cost: 12.5" in yaml.safe_dump(planned.sweep.model_dump(mode="json"))


def test_without_max_cost_nothing_changes(tmp_path: Path) -> None:
    (tmp_path / "lr.yaml").write_text(SWEEP)
    planned = plan_sweep(str(tmp_path / "lr.yaml"), SweepOptions(), LIBRARY)
    assert all(spec.sweep_budget is None for spec in planned.specs)
    assert "max_cost" not in planned.sweep.model_dump(mode="json")
