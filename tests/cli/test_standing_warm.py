"""A lone ``experiment start --local`` whose trainer started fresh leaves a standing warm trainer behind
(:mod:`tfcli.local.standing`): the next start forks its trainer from it and trains exactly what a fresh trainer
trains; it ends itself when idle, or when ended by hand, and takes its folder with it; it is this user's only, it
serves only the code it imported, and ``TFCLI_WARM_TRAINER=off`` turns it off."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_kit import invoke, status, tiny_spec, wait_for

from tfcli.local import standing
from tfcli.local.standing import WARM_VARIABLE
from tfcli.local.warm import start_warm
from tfcli.local.zygote import SOCKET_NAME


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private, short runtime folder (socket paths are short) where this test's standing trainer lives, none
    named to the test by ``TFCLI_WARM_TRAINER``; any zygote left there is ended afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    monkeypatch.delenv(WARM_VARIABLE, raising=False)
    yield folder
    standing.end_standing(folder)
    shutil.rmtree(folder, ignore_errors=True)


def rows(progress: Path) -> list[tuple[int, int, float, int]]:
    """What a run trained, without its wall times."""
    lines = [json.loads(line) for line in progress.read_text().splitlines()]
    return [(row["episode"], row["timesteps"], row["return"], row["length"]) for row in lines]


@pytest.mark.slow
def test_the_next_lone_start_forks_its_trainer_from_the_one_the_last_start_left(
    lab: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(standing.IDLE_VARIABLE, "300")
    folder = standing.standing_folder()
    assert folder is not None and not folder.exists()
    for name in ("first", "second"):
        (lab / f"{name}.yaml").write_text(tiny_spec(name, 300).replace("saver_frequency: 100t", "seed: 5"))
    code, stdout, stderr = invoke("experiment", "start", "-f", "first.yaml", "--local")
    assert code == 0, stdout + stderr
    wait_for(lambda: (folder / SOCKET_NAME).exists(), what="the standing trainer's socket", timeout=120)
    assert standing.private(folder) and standing.zygote_alive(folder)
    code, stdout, stderr = invoke("experiment", "start", "-f", "second.yaml", "--local")
    assert code == 0, stdout + stderr
    assert status("second")["state"] == "completed"
    log = (folder / standing.LOG_FILE).read_text()
    assert "second: trainer forked" in log and "first" not in log, log  # the first started fresh
    first, second = (lab / "experiments" / name / "results" / "progress.jsonl" for name in ("first", "second"))
    assert rows(second) == rows(first) and len(rows(first)) >= 5  # same seed: forked trains what fresh trained
    assert standing.leave_warm() is None  # one serves this code already: no second one

    os.kill(int((folder / standing.PID_FILE).read_text()), signal.SIGTERM)  # ended by hand
    wait_for(lambda: not folder.exists(), what="the folder to go with its zygote", timeout=30)


@pytest.mark.slow
def test_the_standing_trainer_ends_itself_when_idle(runtime_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(standing.IDLE_VARIABLE, "2")
    folder = standing.leave_warm()
    assert folder is not None and standing.zygote_alive(folder)
    wait_for(lambda: not folder.exists(), what="the idle zygote to end", timeout=120)
    assert start_warm(["run"], {}, "t") is None  # none to ask: the next trainer starts fresh


def test_ending_the_standing_trainers_of_a_runtime_folder_spares_what_is_not_one(
    runtime_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(standing.IDLE_VARIABLE, "300")
    folder = standing.leave_warm()
    assert folder is not None
    pid = int((folder / standing.PID_FILE).read_text())
    stranger = runtime_dir / f"tfcli-warm-{os.getuid()}-0000000000000000"
    stranger.mkdir(mode=0o700)
    (stranger / standing.PID_FILE).write_text(f"{os.getpid()}\n")  # a live process that is not a zygote: this one
    old = time.time() - standing.EXEC_SECONDS - 1
    os.utime(stranger / standing.PID_FILE, (old, old))  # past its first seconds (a new zygote's may read empty)
    assert standing.end_standing(runtime_dir) == [pid]
    assert not folder.exists() and not stranger.exists()  # a stale folder goes too
    wait_for(lambda: os.waitpid(pid, os.WNOHANG)[0] == pid, what="the zygote's end", timeout=10)  # our child


def test_off_turns_warm_trainers_off(runtime_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(standing.IDLE_VARIABLE, "60")
    monkeypatch.setenv(WARM_VARIABLE, standing.OFF)
    assert standing.leave_warm() is None and start_warm(["run"], {}, "t") is None
    assert not list(runtime_dir.iterdir())
    monkeypatch.setenv(WARM_VARIABLE, str(runtime_dir / "sweeps-own"))  # a sweep's trial: its sweep's zygote
    assert standing.leave_warm() is None and not list(runtime_dir.iterdir())
    monkeypatch.delenv(WARM_VARIABLE)
    monkeypatch.setenv(standing.IDLE_VARIABLE, "0")  # none left behind either
    assert standing.leave_warm() is None and not list(runtime_dir.iterdir())


def test_a_folder_others_may_enter_or_a_dead_zygotes_is_not_asked(runtime_dir: Path) -> None:
    folder = standing.standing_folder()
    assert folder is not None
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    (folder / standing.PID_FILE).write_text(f"{os.getpid()}\n")  # a live process, but not a zygote of this folder
    assert standing.zygote_alive(folder)  # for its first seconds: maybe forked, not yet the zygote
    old = time.time() - standing.EXEC_SECONDS - 1
    os.utime(folder / standing.PID_FILE, (old, old))
    (folder / SOCKET_NAME).write_text("")
    assert not standing.private(folder) and not standing.zygote_alive(folder)
    assert start_warm(["run"], {}, "t") is None
    assert standing.leave_warm() is None and (folder / SOCKET_NAME).exists()  # not ours to clean up
    folder.chmod(0o700)
    assert standing.private(folder) and start_warm(["run"], {}, "t") is None  # its zygote is gone
    link = runtime_dir / "link"
    link.symlink_to(folder)
    assert not standing.private(link)


def test_the_fingerprint_follows_the_code_and_what_shapes_its_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "pkg" / "module.py"
    source.parent.mkdir()
    source.write_text("A = 1\n")
    monkeypatch.setattr(standing, "_source_roots", lambda: [source.parent])
    monkeypatch.delenv("PYTHONPATH", raising=False)
    first = standing.fingerprint()
    assert standing.fingerprint() == first
    monkeypatch.setenv("UNRELATED", "x")
    assert standing.fingerprint() == first
    source.write_text("A = 22\n")
    edited = standing.fingerprint()
    assert edited != first
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert standing.fingerprint() != edited
    monkeypatch.delenv("PYTHONPATH")
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "1")
    assert standing.fingerprint() != edited


def test_a_socket_path_too_long_for_unix_means_no_standing_trainer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/tmp/" + "x" * 90)
    assert standing.standing_folder() is None
    monkeypatch.delenv(WARM_VARIABLE, raising=False)
    assert standing.leave_warm() is None and start_warm(["run"], {}, "t") is None


def test_without_proc_no_standing_trainer_is_left_or_asked(
    runtime_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(standing.IDLE_VARIABLE, "60")
    monkeypatch.setattr(standing, "PROC", tmp_path / "no-proc")  # macOS: a live zygote cannot be told from a dead one
    assert standing.standing_folder() is None
    assert standing.leave_warm() is None and not list(runtime_dir.iterdir())
