"""Judging a rung reads each sibling's published score once (issue 27): a trial publishes its score at a rung as a
small file written once; a sibling's file that cannot be read (``ESTALE`` on the GCS FUSE mount when an object's
generation was replaced, any ``OSError``) is "not reached yet", never a failure; an undecided rung is rechecked no
sooner than the mount's metadata TTL, backing off; a recheck interval under GCS's one write per second per object
is refused with exit 2."""

from __future__ import annotations

import errno
import itertools
import json
from pathlib import Path

import pytest
from cli_kit import invoke
from test_early_stop import LIBRARY, write_progress

from tfcli.sweeps.create import SweepOptions, plan_sweep
from trainer.hooks import early_stop as early_stop_module
from trainer.hooks.early_stop import MAX_RECHECK_SECONDS, early_stopping
from trainer.kernel.spec.early_stop import METADATA_TTL_SECONDS
from trainer.kernel.state import RunState
from trainer.rung_scores import rung_file
from trainer.signals import StopRequest


def three_trials(tmp_path: Path):  # type: ignore[no-untyped-def]
    """3 combinations x 1 seed (s-0, s-1, s-2), reduction 2, rungs at 100 and 200 timesteps."""
    return plan_sweep("cartpole-lr", SweepOptions(name="s", seeds=1, reduction=2, min_timesteps=100), LIBRARY).specs


def test_a_sibling_is_judged_from_its_published_score_read_once(tmp_path: Path) -> None:
    specs = three_trials(tmp_path)
    write_progress(tmp_path / "s-0", [100.0] * 10, rungs=(100,))
    write_progress(tmp_path / "s-2", [50.0] * 10, rungs=(100,))
    for sibling in ("s-0", "s-2"):  # a sibling's log is never read: its published score is enough
        (tmp_path / sibling / "progress.jsonl").unlink()
    write_progress(tmp_path / "s-1", [5.0] * 10)
    stop = StopRequest()
    opened: list[Path] = []

    def read(path: Path) -> str:
        opened.append(path)
        return path.read_text()

    hook = early_stopping(specs[1].early_stop, "s-1", tmp_path / "s-1", stop, RunState(), read)
    assert hook is not None
    hook.after_step(RunState(timesteps=100))
    assert json.loads(rung_file(tmp_path / "s-1", 100).read_text()) == {"rung": 100, "score": 5.0}  # its own, published
    assert stop.requested and "IQM 5.0 at 100 timesteps" in str(hook.pruned)
    assert sorted(path.parent.parent.name for path in opened) == ["s-0", "s-2"]
    hook.judge()
    assert hook.scores(100) == {0: 100.0, 1: 5.0, 2: 50.0}
    assert len(opened) == 2  # known scores are never read again


def test_a_published_score_is_never_rewritten(tmp_path: Path) -> None:
    """A resumed run passes its rungs again; the first file stands (a second write would replace the object, and a
    sibling reading it would get ESTALE), and a rung passed before a crash that came before its file is published."""
    specs = three_trials(tmp_path)
    own = tmp_path / "s-1"
    write_progress(own, [5.0] * 10)
    hook = early_stopping(specs[1].early_stop, "s-1", own, StopRequest(), RunState())
    assert hook is not None
    hook.after_step(RunState(timesteps=100))
    written = rung_file(own, 100).stat().st_mtime_ns
    write_progress(own, [7.0] * 20)  # a resume whose episodes differ would score differently
    resumed = early_stopping(specs[1].early_stop, "s-1", own, StopRequest(), RunState(timesteps=150))
    assert resumed is not None and rung_file(own, 100).stat().st_mtime_ns == written
    assert json.loads(rung_file(own, 100).read_text())["score"] == 5.0
    early_stopping(specs[1].early_stop, "s-1", own, StopRequest(), RunState(timesteps=200))
    assert json.loads(rung_file(own, 200).read_text()) == {"rung": 200, "score": 7.0}  # passed, not yet published


@pytest.mark.parametrize("code", [errno.ESTALE, errno.EIO, errno.ENOENT])
def test_a_sibling_that_cannot_be_read_has_not_reached_the_rung(tmp_path: Path, code: int) -> None:
    specs = three_trials(tmp_path)
    write_progress(tmp_path / "s-0", [100.0] * 10, rungs=(100,))
    write_progress(tmp_path / "s-2", [50.0] * 10, rungs=(100,))
    write_progress(tmp_path / "s-1", [5.0] * 10)
    failing = {tmp_path / "s-2"}

    def read(path: Path) -> str:
        if path.parent.parent in failing:
            raise OSError(code, "Stale file handle", str(path))
        return path.read_text()

    stop = StopRequest()
    hook = early_stopping(specs[1].early_stop, "s-1", tmp_path / "s-1", stop, RunState(), read)
    assert hook is not None
    hook.after_step(RunState(timesteps=100))
    assert hook.scores(100) == {0: 100.0, 1: 5.0}  # s-2 not reached yet
    assert stop.requested and "(2 combinations at this rung)" in str(hook.pruned)  # decided from those that were
    failing.clear()
    assert hook.scores(100) == {0: 100.0, 1: 5.0, 2: 50.0}  # read again later, once readable


def test_an_undecided_rung_is_rechecked_no_sooner_than_the_mounts_ttl_backing_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = three_trials(tmp_path)  # recheck_seconds defaults to 5, under the TTL
    write_progress(tmp_path / "s-1", [5.0] * 10)
    clock = [1000.0]
    monkeypatch.setattr(early_stop_module.time, "monotonic", lambda: clock[0])
    opened: list[float] = []

    def read(path: Path) -> str:
        opened.append(clock[0])
        return path.read_text()

    hook = early_stopping(specs[1].early_stop, "s-1", tmp_path / "s-1", StopRequest(), RunState(), read)
    assert hook is not None
    hook.after_step(RunState(timesteps=100))  # alone at the rung: undecided
    judged = [clock[0]]
    for _ in range(4000):
        clock[0] += 1.0
        before = len(opened)
        hook.after_step(RunState(timesteps=101))
        if len(opened) > before:
            judged.append(clock[0])
    gaps = [later - earlier for earlier, later in itertools.pairwise(judged)]
    assert gaps[0] >= METADATA_TTL_SECONDS
    assert gaps[:4] == [gaps[0] * 2**k for k in range(4)]  # each undecided recheck doubles the wait
    assert max(gaps) == MAX_RECHECK_SECONDS


def test_a_recheck_more_often_than_once_a_second_is_refused(lab: Path) -> None:
    (lab / "fast.yaml").write_text(
        "name: fast\nbase: cartpole-ppo\naxes: {agent.learning_rate: [0.1, 0.2]}\nearly_stop: {recheck_seconds: 0.5}\n"
    )
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "fast.yaml", "--no-build")
    assert code == 2, stdout + stderr
    assert "fast.yaml: early_stop.recheck_seconds: at least 1 second" in stderr and "Traceback" not in stderr
    assert not (lab / "experiments" / "fast").exists()
