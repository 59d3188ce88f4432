"""``max_cost``: the trainer, handed its hourly price by the stack (``TFCLI_HOURLY_PRICE``), pauses itself once the
run has cost that much — checkpoint, ``status: paused`` with the reason, exit 3 — and counts the time of earlier
segments after a resume. Real tiny runs with a very high price, as the containers run them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from trainer_testkit import complete_checkpoints, finish, read_progress, read_result, trainer_process

from trainer.hooks.cost_limit import CostLimit, cost_limit_reason, parse_hourly_price, parse_start_allowance
from trainer.kernel.spec.outcomes import EXIT_COST_LIMIT
from trainer.kernel.state import RunState
from trainer.results import TRIAL_COST_LIMIT_EXIT_CODE
from trainer.signals import StopRequest

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

PRICE = 720.0  # dollars per hour: 20 cents per second of training
BUDGET = 10_000_000  # never reached: the cost limit ends the runs


def run_with_price(spec: Path, output: Path, *more: str) -> tuple[int, str]:
    return finish(trainer_process("run", "--spec", str(spec), "--output", str(output), *more), timeout=300)


def dollars(reason: str) -> tuple[float, float]:
    match = re.fullmatch(r"max_cost reached \(\$([0-9.,]+) of \$([0-9.,]+)\)", reason)
    assert match, reason
    return float(match.group(1).replace(",", "")), float(match.group(2).replace(",", ""))


def test_the_run_pauses_itself_at_max_cost_and_counts_resumed_time(
    tmp_path: Path, spec_file: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TFCLI_HOURLY_PRICE", str(PRICE))
    output = tmp_path / "out"
    spec = spec_file(total_timesteps=BUDGET, max_cost=1.0, saver_frequency="1000000t")

    code, stderr = run_with_price(spec, output)
    assert code == EXIT_COST_LIMIT, stderr
    first = read_result(output)
    assert first["status"] == "paused"
    accrued, limit = dollars(first["reason"])
    assert limit == 1.0 and accrued >= 1.0
    assert accrued <= first["wall_seconds"] * PRICE / 3600 + 0.005  # counted on the run's wall time (+ checkpoint)
    assert 0 < first["timesteps"] < BUDGET
    assert complete_checkpoints(output)[-1]["timesteps"] == first["timesteps"]  # it checkpointed
    assert "max_cost reached" in stderr and "raise max_cost" in stderr

    # Started again with the same limit: the checkpoint's wall time already spent it, so it trains no step.
    code, stderr = run_with_price(spec, output)
    assert code == EXIT_COST_LIMIT, stderr
    again = read_result(output)
    assert again["status"] == "paused" and again["timesteps"] == first["timesteps"]
    assert dollars(again["reason"])[1] == 1.0

    # A higher limit continues from the checkpoint until the new limit: $1 over what the checkpoint counts (the first
    # step's TensorFlow tracing alone can take 15-35 s on a busy machine, past a fixed $2).
    raised = round(complete_checkpoints(output)[-1]["wall_seconds"] * PRICE / 3600 + 1.0, 2)
    spec = spec_file(total_timesteps=BUDGET, max_cost=raised, saver_frequency="1000000t")
    code, stderr = run_with_price(spec, output)
    assert code == EXIT_COST_LIMIT, stderr
    last = read_result(output)
    accrued, limit = dollars(last["reason"])
    assert limit == raised and accrued >= raised
    assert last["timesteps"] > first["timesteps"]
    episodes = read_progress(output)
    assert [line["episode"] for line in episodes] == list(range(1, len(episodes) + 1))  # none listed twice


def test_a_sweeps_trial_at_max_cost_exits_0_so_its_job_index_is_not_failed(
    tmp_path: Path, spec_file: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--output-parent`` (what a GKE sweep's slot pod passes): paused, with the reason, but exit 0, which completes
    the index."""
    import yaml

    monkeypatch.setenv("TFCLI_HOURLY_PRICE", str(PRICE))
    spec = spec_file(total_timesteps=BUDGET, max_cost=0.01, saver_frequency="1000000t")
    parent = tmp_path / "sweep"
    output = parent / yaml.safe_load(spec.read_text())["name"]
    code, stderr = finish(trainer_process("run", "--spec", str(spec), "--output-parent", str(parent)), timeout=300)
    assert code == TRIAL_COST_LIMIT_EXIT_CODE == 0, stderr
    result = read_result(output)
    assert result["status"] == "paused" and result["reason"].startswith("max_cost reached ($")
    assert complete_checkpoints(output)[-1]["timesteps"] == result["timesteps"]


def test_node_time_per_start_moves_the_pause_earlier_and_result_json_counts_the_starts(
    tmp_path: Path, spec_file: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 s of node time per start (``TFCLI_START_ALLOWANCE_SECONDS``, what the stack hands a GKE learner) at 20
    cents a second: a max_cost of $24 leaves 60 s of training, not the 120 s a run without the allowance trains (60 s:
    longer than the first step's TensorFlow tracing, which took 36 s on a busy machine). Started again, the second
    start adds its own 60 s: the checkpoint's 60 s plus 2 x 60 s are past the limit at once."""
    allowance, max_cost, rate = 60.0, 24.0, PRICE / 3600
    monkeypatch.setenv("TFCLI_HOURLY_PRICE", str(PRICE))
    monkeypatch.setenv("TFCLI_START_ALLOWANCE_SECONDS", str(allowance))
    output = tmp_path / "out"
    spec = spec_file(total_timesteps=BUDGET, max_cost=max_cost, saver_frequency="1000000t")

    code, stderr = run_with_price(spec, output)
    assert code == EXIT_COST_LIMIT, stderr
    first = read_result(output)
    assert first["status"] == "paused" and first["starts"] == 1
    accrued, limit = dollars(first["reason"])
    assert limit == max_cost and accrued >= max_cost
    trained_at_stop = accrued / rate - allowance  # the reason's dollars less one start's node time
    assert trained_at_stop <= first["wall_seconds"] < accrued / rate  # the reason counts more than training time
    assert trained_at_stop * rate < max_cost, first  # ... where training time alone had not: the allowance paused it
    episodes = read_progress(output)
    assert episodes and max(line["wall_seconds"] for line in episodes) < max_cost / rate
    assert {line["start"] for line in episodes} == {1}  # each episode names the start that trained it
    checkpoint = complete_checkpoints(output)[-1]
    assert checkpoint["starts"] == 1

    code, stderr = run_with_price(spec, output)
    assert code == EXIT_COST_LIMIT, stderr
    again = read_result(output)
    assert again["starts"] == 2 and again["timesteps"] == first["timesteps"], again
    assert dollars(again["reason"])[0] >= (checkpoint["wall_seconds"] + 2 * allowance) * rate - 0.005


def test_without_a_price_max_cost_does_not_stop_the_run(tmp_path: Path, spec_file: Any) -> None:
    """A local run has no price: ``max_cost`` is the GKE run's limit, and the budget ends this one."""
    output = tmp_path / "out"
    spec = spec_file(total_timesteps=300, max_cost=0.0001)
    code, stderr = finish(trainer_process("run", "--spec", str(spec), "--output", str(output)), timeout=300)
    assert code == 0, stderr
    assert read_result(output)["status"] == "completed" and "reason" not in read_result(output)


def test_a_bad_price_is_invalid_input(tmp_path: Path, spec_file: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFCLI_HOURLY_PRICE", "two dollars")
    code, stderr = finish(trainer_process("run", "--spec", str(spec_file(episodes=1)), "--output", str(tmp_path)))
    assert code == 2
    assert "TFCLI_HOURLY_PRICE" in stderr and "Traceback" not in stderr


def test_accrued_cost_is_price_times_all_segments_wall_time() -> None:
    state = RunState(earlier_wall_seconds=1800.0)  # half an hour before the resume
    state.started -= 900.0  # and a quarter of an hour in this process
    stop = StopRequest()
    limit = CostLimit(max_cost=10.0, hourly_price=4.0, stop=stop)
    assert limit.accrued(state) == pytest.approx(3.0, abs=1e-3)
    limit.check(state)
    assert not stop.requested
    CostLimit(3.0, 4.0, stop).check(state)
    assert stop.requested and stop.reason == cost_limit_reason(3.0, 3.0) == "max_cost reached ($3.00 of $3.00)"


def test_accrued_cost_adds_node_time_for_each_start() -> None:
    state = RunState(earlier_wall_seconds=1800.0, starts=2)  # half an hour of training over two starts
    state.started -= 900.0
    stop = StopRequest()
    limit = CostLimit(max_cost=10.0, hourly_price=4.0, stop=stop, allowance_seconds=1200.0)
    assert limit.accrued(state) == pytest.approx(4.0 * (2700 + 2 * 1200) / 3600, abs=1e-3)
    CostLimit(5.0, 4.0, stop).check(state)  # $3.00 without the allowance: below
    assert not stop.requested
    CostLimit(5.0, 4.0, stop, allowance_seconds=1200.0).check(state)  # $5.67 with it: past the limit
    assert stop.requested and stop.reason.startswith("max_cost reached ($5.67 of $5.00")


def test_the_allowance_variable() -> None:
    assert parse_start_allowance(None) == 0.0 and parse_start_allowance("") == 0.0
    assert parse_start_allowance("1200") == 1200.0
    for bad in ("-1", "nan", "inf", "twenty minutes"):
        with pytest.raises(ValueError, match="TFCLI_START_ALLOWANCE_SECONDS: expected seconds of node time"):
            parse_start_allowance(bad)


def test_the_price_variable() -> None:
    assert parse_hourly_price(None) is None and parse_hourly_price(" ") is None
    assert parse_hourly_price("1.25") == 1.25
    for bad in ("-1", "nan", "inf", "x"):
        with pytest.raises(ValueError):
            parse_hourly_price(bad)
