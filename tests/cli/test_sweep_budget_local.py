"""A sweep's ``max_cost`` on this machine, kept by the trials (the same rule as on GKE: the trainer decides): with a
price in the environment, the first trial pauses at the sweep's limit, the second is paused before it builds anything
(the budget is spent); raising ``max_cost`` in ``sweep.yaml`` and ``resume -s`` trains both to the end. Real tiny
trainings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_kit import invoke, sweep_status

from trainer.kernel.spec.outcomes import paused_at_cost_limit

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

BUDGET = 400
PRICE = 36_000.0  # dollars per hour: $10 a second, so $1.00 goes in the first steps
SWEEP = f"""\
name: bud
base:
  name: bud
  environment: cartpole
  agent: {{agent: ppo, batch_size: 2, learning_rate: 0.001, network: [{{type: dense, size: 8, activation: tanh}}]}}
  total_timesteps: {BUDGET}
  saver_frequency: 10000t
seeds: 2
max_cost: 1.0
"""


def test_the_trials_keep_the_sweeps_budget_and_resume_goes_on_once_it_is_raised(
    lab: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TFCLI_HOURLY_PRICE", str(PRICE))
    (lab / "bud.yaml").write_text(SWEEP)
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "bud.yaml", "--no-build")
    assert code == 0, stdout + stderr
    trial = yaml.safe_load((lab / "experiments" / "bud-1" / "experiment.yaml").read_text())
    assert trial["sweep_budget"] == {"sweep": "bud", "trials": 2, "max_cost": 1.0}

    invoke("experiment", "start", "-s", "bud", "--parallel", "1")  # waits for the queue
    trials = {t["trial"]: t for t in sweep_status("bud")["trials"]}
    for name in ("bud-0", "bud-1"):
        assert trials[name]["state"] == "paused" and trials[name]["timesteps"] < BUDGET, trials[name]
        result = json.loads((lab / "experiments" / name / "results" / "result.json").read_text())
        assert paused_at_cost_limit(result["status"], result["reason"]), result
        assert "of $1.00: sweep bud, all its trials" in result["reason"]
    assert trials["bud-1"]["timesteps"] == 0  # its turn came after the budget was spent: nothing built

    sweep_yaml = lab / "experiments" / "bud" / "sweep.yaml"
    sweep_yaml.write_text(sweep_yaml.read_text().replace("max_cost: 1.0", "max_cost: 100000.0"))
    code, stdout, stderr = invoke("experiment", "resume", "-s", "bud")
    assert code == 0, stdout + stderr
    status = sweep_status("bud")
    assert status["state"] == "completed", status
    assert [(t["state"], t["timesteps"]) for t in status["trials"]] == [("completed", BUDGET)] * 2
    trial = yaml.safe_load((lab / "experiments" / "bud-0" / "experiment.yaml").read_text())
    assert trial["sweep_budget"]["max_cost"] == 100000.0
