"""A local sweep's trials are forked by one warm trainer (:mod:`tfcli.local.zygote`) that imported TensorFlow and
TensorForce once, and each stays isolated: a trial forked warm after others trains exactly what the same trial
trains alone in a fresh ``python -m trainer`` (same seed: the same episodes, returns and lengths), started ahead of
its turn and traced before it trained (tfcli/local/ahead.py) or not, and pausing a sweep pauses a forked trainer
(its own pid, exit 143, a checkpoint), the one held ahead too, which then resume warm again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_kit import invoke, states, sweep_status, tiny_sweep, wait_for

pytestmark = pytest.mark.slow


def episodes(progress: Path) -> list[tuple[int, int, float, int]]:
    """What a run trained, without its wall times."""
    rows = [json.loads(line) for line in progress.read_text().splitlines()]
    return [(row["episode"], row["timesteps"], row["return"], row["length"]) for row in rows]


def test_a_warm_trial_trains_what_it_trains_alone(lab: Path) -> None:
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-s", "tiny", "--parallel", "1")
    assert code == 0, stdout + stderr
    assert states("tiny") == ["completed"] * 4
    warm = (lab / "experiments" / "tiny" / "logs" / "warm.log").read_text()
    assert "serving" in warm and all(f"tiny-{i}: trainer forked" in warm for i in range(4)), warm
    queue = (lab / "experiments" / "tiny" / "logs" / "queue.log").read_text()
    if (os.cpu_count() or 1) > 1:  # --parallel 1 leaves a core idle: each next trial got ready (traced) ahead
        assert all(f"tiny-{i}: its turn (started ahead, ready)" in queue for i in (1, 2, 3)), queue

    last = lab / "experiments" / "tiny-3"  # forked after three trials had trained in siblings of its process
    alone = lab / "alone"
    fresh = subprocess.run(
        [sys.executable, "-m", "trainer", "run", "--spec", str(last / "experiment.yaml"), "--output", str(alone)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert fresh.returncode == 0, fresh.stderr
    warm_episodes = episodes(last / "results" / "progress.jsonl")
    assert warm_episodes == episodes(alone / "progress.jsonl")
    assert len(warm_episodes) >= 5 and warm_episodes[-1][1] <= 300
    forked = [episodes(lab / "experiments" / f"tiny-{i}" / "results" / "progress.jsonl") for i in range(4)]
    assert len({tuple(run) for run in forked}) == 4  # seeds and learning rates differ: no shared random stream


def test_pausing_a_sweep_pauses_its_forked_trainer_which_resumes_warm(lab: Path) -> None:
    (lab / "tiny.yaml").write_text(tiny_sweep().replace("total_timesteps: 300", "total_timesteps: 3000"))
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr
    code, _, stderr = invoke("experiment", "start", "-s", "tiny", "--detach", "--parallel", "1")
    assert code == 0, stderr
    checkpoints = lab / "experiments" / "tiny-0" / "results" / "checkpoints"
    wait_for(lambda: checkpoints.is_dir() and any(checkpoints.iterdir()), what="a checkpoint", timeout=240)
    code, stdout, stderr = invoke("experiment", "pause", "-s", "tiny")
    assert code == 0, stdout + stderr
    assert sweep_status("tiny")["state"] == "paused"
    ahead = lab / "experiments" / "tiny-1"  # started ahead of its turn as tiny-0 trained, paused while held
    if (os.cpu_count() or 1) > 1:
        assert json.loads((ahead / "results" / "result.json").read_text())["timesteps"] == 0
        assert states("tiny")[:2] == ["paused", "paused"] and not (ahead / "held").exists()
    result = json.loads((lab / "experiments" / "tiny-0" / "results" / "result.json").read_text())
    assert result["status"] == "paused" and 0 < result["timesteps"] < 3000
    log = (lab / "experiments" / "tiny-0" / "logs" / "trainer.log").read_text()
    assert "paused after" in log  # the forked trainer's own output, in the trial's own log
    code, stdout, stderr = invoke("experiment", "resume", "-s", "tiny")
    assert code == 0, stdout + stderr
    assert states("tiny") == ["completed"] * 4
    warm = (lab / "experiments" / "tiny" / "logs" / "warm.log").read_text()
    assert warm.count("tiny-0: trainer forked") == 2, warm  # once before the pause, once to resume


def test_the_zygote_forks_only_before_tensorflow_ran_an_op() -> None:
    """Importing TensorFlow and TensorForce leaves the runtime unstarted, so forking is safe; once an op ran
    (threads, an initialized eager context: tensorflow/tensorflow#2448), the zygote refuses to fork."""
    code = (
        "from tfcli.local.zygote import fork_safe, warm_up\n"
        "warm_up()\n"
        "print('before:', fork_safe())\n"
        "import tensorflow as tf\n"
        "tf.constant(1.0) + 1.0\n"
        "print('after:', fork_safe())\n"
    )
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert "before: None" in output
    assert "after: TensorFlow's runtime is initialized (an op ran)" in output


def test_a_trial_starts_fresh_where_the_zygote_cannot_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tfcli.local.standing import OFF, WARM_VARIABLE
    from tfcli.local.warm import start_warm
    from tfcli.local.zygote import UNAVAILABLE

    monkeypatch.setenv(WARM_VARIABLE, OFF)
    assert start_warm(["run"], {}, "t") is None  # warm trainers turned off: a fresh trainer
    monkeypatch.setenv(WARM_VARIABLE, str(tmp_path))
    (tmp_path / UNAVAILABLE).write_text("TensorFlow's runtime is initialized (an op ran)\n")
    assert start_warm(["run"], {}, "t") is None


def test_a_sweep_zygote_whose_queue_was_killed_outright_takes_its_folder_with_it(tmp_path: Path) -> None:
    """The queue's zygote is ended with it (SIGTERM from the kernel, ``dies_with_this_process``), SIGKILL included,
    and removes its socket's folder: none is left behind in the temporary folder."""
    code = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from tfcli.local.standing import WARM_VARIABLE\n"
        "from tfcli.local.warm import warm_trainer\n"
        "with warm_trainer(Path(sys.argv[1])):\n"
        "    folder = Path(os.environ[WARM_VARIABLE])\n"
        "    while not (folder / 'zygote.sock').exists():\n"
        "        time.sleep(0.05)\n"
        "    print(folder, flush=True)\n"
        "    time.sleep(600)\n"
    )
    queue = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / "warm.log")], stdout=subprocess.PIPE, text=True
    )
    assert queue.stdout is not None
    folder = Path(queue.stdout.readline().strip())
    assert folder.is_dir() and "serving" in (tmp_path / "warm.log").read_text()
    queue.kill()  # SIGKILL: the queue's own clean-up never runs
    queue.wait()
    wait_for(lambda: not folder.exists(), what="the zygote's folder to go", timeout=30)
