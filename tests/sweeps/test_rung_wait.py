"""Waiting at an undecided rung (issue 28), without training: a trial whose siblings could still reach its rung waits
there when its scheduler starts it again (``TFCLI_RUNG_WAIT=1``); started again it is pruned, promoted or still
waiting before anything is built; with nobody left to compare against it goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_early_stop import LIBRARY, write_progress

from tfcli.sweeps.create import SweepOptions, plan_sweep
from trainer.hooks.early_stop import EarlyStop, early_stopping, waiting_decided
from trainer.kernel.state import RunState
from trainer.rung_wait import WAIT_ENV, waiting_rung
from trainer.signals import StopRequest


@pytest.fixture
def specs():  # type: ignore[no-untyped-def]
    """3 combinations x 1 seed (s-0, s-1, s-2), reduction 2, rungs at 100 and 200 timesteps."""
    return plan_sweep("cartpole-lr", SweepOptions(name="s", seeds=1, reduction=2, min_timesteps=100), LIBRARY).specs


def alone_at_first_rung(specs, tmp_path: Path) -> tuple[Path, StopRequest, EarlyStop]:  # type: ignore[no-untyped-def]
    """s-0 passes rung 100 while s-1 and s-2 have not started."""
    own = tmp_path / "s-0"
    write_progress(own, [5.0] * 10)
    stop = StopRequest()
    hook = early_stopping(specs[0].early_stop, "s-0", own, stop, RunState())
    assert hook is not None
    hook.after_step(RunState(timesteps=100))
    return own, stop, hook


def wait_at_first_rung(specs, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """s-0 alone at rung 100 while s-1 and s-2 could still get there: it waits; its result.json says so."""
    own, stop, hook = alone_at_first_rung(specs, tmp_path)
    assert stop.requested and hook.waiting == "waiting at rung 100 timesteps for 1 more combination (1 of 2 there)"
    result = {"status": "paused", "timesteps": 100, "episodes": 10, "reason": stop.reason}
    (own / "result.json").write_text(json.dumps(result))
    assert waiting_rung(result) == 100
    return own


def test_a_trial_waits_at_an_undecided_rung_and_is_pruned_when_it_is_decided(
    specs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WAIT_ENV, "1")
    own = wait_at_first_rung(specs, tmp_path)
    ended = waiting_decided(own, specs[0].early_stop, "s-0")
    assert ended is not None and ended.exit_code == 143 and ended.message.startswith("still waiting at rung 100")
    write_progress(tmp_path / "s-1", [50.0] * 10, rungs=(100,))  # another combination gets there: decided
    ended = waiting_decided(own, specs[0].early_stop, "s-0")
    assert ended is not None and ended.exit_code == 0 and "pruned after 100 timesteps: IQM 5.0" in ended.message
    result = json.loads((own / "result.json").read_text())
    assert result["status"] == "pruned" and result["timesteps"] == 100 and "(2 combinations" in result["reason"]


def test_a_promoted_trial_goes_on_from_the_rung(specs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WAIT_ENV, "1")
    own = wait_at_first_rung(specs, tmp_path)
    write_progress(tmp_path / "s-1", [1.0] * 10, rungs=(100,))
    assert waiting_decided(own, specs[0].early_stop, "s-0") is None  # trains on from its checkpoint at the rung
    resumed = early_stopping(specs[0].early_stop, "s-0", own, StopRequest(), RunState(timesteps=100))
    assert resumed is not None
    resumed.after_step(RunState(timesteps=150))
    assert resumed.waiting is None and resumed.pruned is None  # the rung is behind it


def test_with_nobody_left_to_compare_against_a_trial_goes_on(
    specs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WAIT_ENV, "1")
    own = wait_at_first_rung(specs, tmp_path)
    for trial in ("s-1", "s-2"):  # the others ended below the rung
        (tmp_path / trial).mkdir()
        (tmp_path / trial / "result.json").write_text(json.dumps({"status": "failed", "timesteps": 40}))
    assert waiting_decided(own, specs[0].early_stop, "s-0") is None
    stop = StopRequest()
    hook = early_stopping(specs[0].early_stop, "s-0", own, stop, RunState(timesteps=100))
    assert hook is not None
    hook.after_step(RunState(timesteps=200))  # rung 200: alone there, nobody left: it goes on
    assert not stop.requested and hook.waiting is None


def test_without_a_scheduler_that_starts_it_again_a_trial_never_waits(
    specs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(WAIT_ENV, raising=False)
    _, stop, hook = alone_at_first_rung(specs, tmp_path)
    assert not stop.requested and hook.waiting is None  # a GKE Job's pod trains on and rechecks
