"""A sweep's ``max_cost``, kept by its trials: a trial adds what its siblings published (their ``result.json`` and
``progress.jsonl`` in the shared results folder) to its own cost and pauses at the sweep's limit; a trial whose sweep
is already spent ends before anything is built; a raised limit continues it. Real tiny runs as a GKE sweep's pods run
them (``--output-parent``, a very high ``TFCLI_HOURLY_PRICE``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from trainer_testkit import complete_checkpoints, finish, read_result, trainer_process

from trainer.hooks.sweep_spend import RECHECK_SECONDS, SweepSpend, billed_seconds_of, folder_reading, trained_seconds
from trainer.kernel.spec.outcomes import EXIT_COST_LIMIT, paused_at_cost_limit
from trainer.kernel.spec.sweep_budget import SweepBudget

PRICE = 720.0  # dollars per hour: 20 cents per second of training
BUDGET = 10_000_000  # never reached: a cost limit ends the runs
SWEEP = "bud"


def sweep_spec(spec_file: Any, max_cost: float) -> Path:
    budget = {"sweep": SWEEP, "trials": 3, "max_cost": max_cost}
    return Path(spec_file(name=f"{SWEEP}-1", total_timesteps=BUDGET, saver_frequency="1000000t", sweep_budget=budget))


def total(result: dict[str, Any]) -> float:
    """The sweep's dollars that ``result.json``'s reason gives."""
    return float(result["reason"].removeprefix("max_cost reached ($").split(" ")[0].replace(",", ""))


def run_trial(spec: Path, parent: Path) -> tuple[int, str]:
    process = trainer_process("run", "--spec", str(spec), "--output-parent", str(parent))
    return finish(process, timeout=300)


def sibling_ended(parent: Path, name: str, wall_seconds: float) -> None:
    (parent / name).mkdir(parents=True)
    result = {"status": "completed", "timesteps": 100, "episodes": 5, "wall_seconds": wall_seconds}
    (parent / name / "result.json").write_text(json.dumps(result))


@pytest.mark.slow
def test_a_trial_pauses_at_the_sweeps_limit_counting_its_siblings_and_goes_on_when_raised(
    tmp_path: Path, spec_file: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TFCLI_HOURLY_PRICE", str(PRICE))
    parent = tmp_path / "sweep"
    sibling_ended(parent, f"{SWEEP}-0", 3.0)  # $0.60 of the sweep's $1.00 already spent
    code, stderr = run_trial(sweep_spec(spec_file, 1.0), parent)
    assert code == 0, stderr  # a GKE trial: its Job index completes
    first = read_result(parent / f"{SWEEP}-1")
    assert paused_at_cost_limit(first["status"], first["reason"]), first
    assert f"of $1.00: sweep {SWEEP}, all its trials" in first["reason"]
    # The sweep's total is the sibling's $0.60 plus this trial's own (at most its wall time's, which the
    # checkpoint after the stop adds to): without the sibling it would be its own cost alone.
    assert total(first) >= 1.0 and total(first) >= first["wall_seconds"] * PRICE / 3600 + 0.4, first
    assert complete_checkpoints(parent / f"{SWEEP}-1")[-1]["timesteps"] == first["timesteps"] > 0

    # The third trial's turn comes after the budget ran out: paused before anything is built, no TensorFlow.
    started = time.monotonic()
    third = sweep_spec(spec_file, 1.0)
    third.write_text(third.read_text().replace(f"name: {SWEEP}-1", f"name: {SWEEP}-2"))
    code, stderr = run_trial(third, parent)
    assert code == 0, stderr
    ended = read_result(parent / f"{SWEEP}-2")
    assert paused_at_cost_limit(ended["status"], ended["reason"]) and ended["timesteps"] == 0, ended
    assert "raise the sweep's max_cost" in stderr and time.monotonic() - started < 30

    # Raised by $1.00 over what is spent (a TensorFlow start's first steps are slow on a busy machine): the trial
    # continues from its checkpoint until the trials together reach the new limit.
    raised = round(first["wall_seconds"] * PRICE / 3600 + 0.6 + 1.0, 2)
    code, stderr = run_trial(sweep_spec(spec_file, raised), parent)
    assert code == 0, stderr
    last = read_result(parent / f"{SWEEP}-1")
    assert f"of ${raised:,.2f}: sweep" in last["reason"] and last["timesteps"] > first["timesteps"], last
    assert total(last) >= raised and total(last) >= last["wall_seconds"] * PRICE / 3600 + 0.4, last


@pytest.mark.slow
def test_a_local_run_exits_3_when_its_sweep_is_spent(
    tmp_path: Path, spec_file: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TFCLI_HOURLY_PRICE", str(PRICE))
    sibling_ended(tmp_path / "experiments" / f"{SWEEP}-0", "results", 10.0)  # $2.00: over the limit
    output = tmp_path / "experiments" / f"{SWEEP}-1" / "results"
    process = trainer_process("run", "--spec", str(sweep_spec(spec_file, 1.0)), "--output", str(output))
    code, stderr = finish(process)
    assert code == EXIT_COST_LIMIT, stderr
    assert read_result(output)["reason"].startswith("max_cost reached ($2.00 of $1.00")


def test_siblings_are_read_from_their_published_files_and_never_go_down(tmp_path: Path) -> None:
    """``result.json`` (ended) or the last ``progress.jsonl`` line (training), whichever is larger; an unreadable
    file keeps what was read before; siblings are read again only every RECHECK_SECONDS."""
    folder = tmp_path / f"{SWEEP}-0" / "results"
    assert trained_seconds(folder) == 0.0
    folder.mkdir(parents=True)
    lines = [{"episode": k, "timesteps": 10 * k, "wall_seconds": 1.5 * k} for k in range(1, 4)]
    (folder / "progress.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"episode": 4, "wa')
    assert trained_seconds(folder) == 4.5
    (folder / "result.json").write_text(json.dumps({"status": "paused", "wall_seconds": 6.0}))
    assert trained_seconds(folder) == 6.0

    budget = SweepBudget(sweep=SWEEP, trials=3, max_cost=3.0)
    spend = SweepSpend(budget, f"{SWEEP}-1", tmp_path / f"{SWEEP}-1" / "results", hourly_price=PRICE)
    assert spend.siblings_usd(now=0.0) == pytest.approx(1.2)  # 6 s at 20 cents; bud-2 has nothing yet
    (folder / "result.json").write_text(json.dumps({"status": "paused", "wall_seconds": 12.0}))
    assert spend.siblings_usd(now=RECHECK_SECONDS / 2) == pytest.approx(1.2)  # not read again yet
    assert spend.spent(0.5, now=RECHECK_SECONDS / 2) is None
    (folder / "result.json").write_text("{half")
    (folder / "progress.jsonl").unlink()
    assert spend.siblings_usd(now=RECHECK_SECONDS) == pytest.approx(1.2)  # unreadable: no less than before
    (folder / "result.json").write_text(json.dumps({"status": "paused", "wall_seconds": 12.0}))
    reason = f"max_cost reached ($3.00 of $3.00: sweep {SWEEP}, all its trials)"
    assert spend.spent(0.6, now=2 * RECHECK_SECONDS) == reason


def test_a_siblings_node_time_counts_for_each_of_its_starts(tmp_path: Path) -> None:
    """With a node-time allowance (``TFCLI_START_ALLOWANCE_SECONDS``), a sibling costs its training time plus the
    allowance for each start its files show: ``result.json``'s ``starts``, or the last progress line's ``start`` while
    it trains (the larger); a log from before the count counts one start once it has trained."""
    folder = tmp_path / f"{SWEEP}-0" / "results"
    folder.mkdir(parents=True)
    assert folder_reading(folder) == (0.0, 0)  # nothing trained: no start, no node time
    line = {"episode": 1, "timesteps": 10, "wall_seconds": 4.0}
    (folder / "progress.jsonl").write_text(json.dumps(line) + "\n")
    assert folder_reading(folder) == (4.0, 1)
    (folder / "progress.jsonl").write_text(json.dumps(line | {"start": 3}) + "\n")
    assert folder_reading(folder) == (4.0, 3)
    (folder / "result.json").write_text(json.dumps({"status": "paused", "wall_seconds": 6.0, "starts": 2}))
    assert folder_reading(folder) == (6.0, 3)  # the larger of each
    assert billed_seconds_of(folder, 5.0) == 21.0

    budget = SweepBudget(sweep=SWEEP, trials=3, max_cost=10.0)
    own = tmp_path / f"{SWEEP}-1" / "results"
    spend = SweepSpend(budget, f"{SWEEP}-1", own, PRICE, allowance_seconds=5.0)
    assert spend.siblings_usd(now=0.0) == pytest.approx(21.0 * 0.2)  # 6 s + 3 x 5 s at 20 cents a second
    assert SweepSpend(budget, f"{SWEEP}-1", own, PRICE).siblings_usd(now=0.0) == pytest.approx(1.2)  # a local sweep


def test_a_trial_whose_own_node_time_spent_the_sweep_ends_before_it_builds_keeping_its_starts(tmp_path: Path) -> None:
    """``sweep_spent`` counts the trial's own folder as its siblings' are: 1 s of training over 2 starts at 10 s of
    node time each is 21 s, $4.20 at 20 cents a second: past a $4 sweep, where its training alone ($0.20) is not.
    The paused ``result.json`` keeps the counters, ``starts`` too."""
    from trainer.hooks.cost_limit import sweep_spent

    output = tmp_path / f"{SWEEP}-1" / "results"
    output.mkdir(parents=True)
    previous = {"status": "paused", "timesteps": 40, "episodes": 2, "wall_seconds": 1.0, "timesteps_per_second": 40.0,
                "mean_return_last_100": 20.0, "updates": 1, "starts": 2}  # fmt: skip
    (output / "result.json").write_text(json.dumps(previous))
    budget = SweepBudget(sweep=SWEEP, trials=3, max_cost=4.0)
    assert sweep_spent(output, budget, f"{SWEEP}-1", PRICE) is None  # no allowance (a local sweep): $0.20
    ended = sweep_spent(output, budget, f"{SWEEP}-1", PRICE, allowance_seconds=10.0)
    assert ended is not None and ended.reason is not None and ended.reason.startswith("max_cost reached ($4.20 of $4")
    written = json.loads((output / "result.json").read_text())
    assert written["status"] == "paused" and written["starts"] == 2 and written["timesteps"] == 40
