"""An early-stopped GKE sweep whose pods are workers (trainer/sweep_worker.py), played without a cloud and without a
tfcli process watching: the Job the fake ``pulumi up`` applied, run by the Job controller stand-in, each pod a real
``python -m trainer sweep-worker`` process with its own GCS FUSE mount of the bucket on the GCS emulator (which
checks request preconditions as GCS does, tests/gcs_preconditions.py), claiming trials through the storage API.

Issue 28 item 2: with the hopeless combination FIRST in grid order and 2 workers for 4 trials, the first trial at a
rung waits there (its worker takes the next trial) until the rung is decided, so the hopeless trials are pruned at
the first rung; under the old rule (train on while undecided) nothing ever waits and the test fails. A worker killed
mid-trial loses its lease and another worker finishes that trial exactly, from its checkpoint. With the hopeless
combination last, the same workers prune it too, and ``status -s``/``list -s`` read it all from the bucket."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_kit import early_stop_sweep, invoke
from fake_kube import Cluster
from gke_testkit import GCP_PROJECT, FakePulumi, make_gke_project, serve_api
from played_sweep import PlayedSweep

from infra.naming import bucket_name
from trainer.sweep_claims import claims_folder
from trainer.trial_sections import end_line, start_line

pytestmark = pytest.mark.slow

SWEEP = "asha-workers"
BUCKET = bucket_name(SWEEP, GCP_PROJECT)
BUDGET = 600
FAST = {"TFCLI_CLAIM_LEASE": "4", "TFCLI_WORKER_POLL": "0.3"}  # seconds, not minutes: a dead worker's lease expires


@pytest.fixture
def api(fake_pulumi: FakePulumi, auth_plugin: Path) -> Iterator[Cluster]:
    yield from serve_api(fake_pulumi, SWEEP)


def _deploy(lab: Path, gcs: Any, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    make_gke_project(lab)
    gcs.create_bucket(BUCKET)
    (lab / "sweep.yaml").write_text(text)
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "sweep.yaml", "--no-build")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "2")
    assert code == 0, stdout + stderr


def _play(sweep: PlayedSweep, mount: Path) -> dict[str, str]:
    mount.mkdir()
    controller = sweep.play(400)
    logs = {log.name: log.read_text() for log in mount.glob("*.log")}  # whole: a check reads every line
    assert controller.completed == {0, 1} and not controller.failed_indexes, _tails(logs)  # both workers exited 0
    return logs


def _tails(logs: dict[str, str]) -> dict[str, str]:
    """The logs' last lines, for a failure's message."""
    return {name: text[-3000:] for name, text in logs.items()}


def _first_rung_judgements(logs: dict[str, str], trials: set[str]) -> dict[str, str]:
    """What each of ``trials`` did when it first reached the rung at 150 timesteps, from the workers' logs (each
    line after "trial NAME starts" is that trial's). Hopeless first in the queue, a hopeless trial there either
    waits, giving its worker away, or is pruned against the good combination's score, which the other worker,
    taking one trial of each combination first, may publish a few milliseconds earlier: never "going on" alone."""
    judged: dict[str, str] = {}
    for text in logs.values():
        trial = None
        for line in text.splitlines():
            if "sweep worker: trial " in line and line.endswith(" starts"):
                trial = line.split("sweep worker: trial ", 1)[1].removesuffix(" starts")
            elif trial in trials and trial not in judged and "trainer.hooks.early_stop: early stop: " in line:
                said = line.split("early stop: ", 1)[1]
                if "150 timesteps" in said:
                    judged[trial] = said
    return judged


def _status() -> dict[str, dict[str, Any]]:
    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP, "--json")
    assert code == 0, stderr
    status = json.loads(stdout)
    assert status["state"] == "completed", json.dumps(status["trials"], indent=1)
    return {t["trial"]: t for t in status["trials"]}


def _steps(mount: Path, trial: str) -> list[int]:
    lines = (mount / SWEEP / trial / "progress.jsonl").read_text().splitlines()
    return [int(json.loads(line)["timesteps"]) for line in lines]


@pytest.mark.parametrize("hopeless_first", [True, False], ids=["hopeless-first", "hopeless-last"])
def test_hopeless_trials_are_pruned_by_two_workers_in_either_queue_order(
    hopeless_first: bool,
    lab: Path,
    fake_pulumi: FakePulumi,
    gcs: Any,
    api: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _deploy(lab, gcs, early_stop_sweep(SWEEP, hopeless_first=hopeless_first), monkeypatch)
    (job,) = json.loads((fake_pulumi.state / "state.json").read_text())["stacks"][SWEEP]["jobs"]
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 2  # two workers for four trials
    mount = tmp_path / "mount"
    sweep = PlayedSweep(fake_pulumi.state, SWEEP, gcs.bucket(BUCKET), api, {}, mount=mount, env=FAST)
    logs = _play(sweep, mount)

    trials = _status()
    hopeless, good = ((0, 1), (2, 3)) if hopeless_first else ((2, 3), (0, 1))
    states = {k: "pruned" if k in hopeless else "completed" for k in range(4)}
    assert [trials[f"{SWEEP}-{k}"]["state"] for k in range(4)] == [states[k] for k in range(4)]
    seen = json.dumps(trials, indent=1)
    for k in hopeless:
        # Pruned at the first rung, whichever way it got there: judged at once (the good combination scored first),
        # or waiting there and judged when started again, maybe by the other worker pod. Read through that pod's
        # GCS FUSE cache, such a trial's result.json once said nothing, and it trained on to the second rung
        # (trainer/mount_view.py; in both orders, under a full suite's load).
        assert 150 <= trials[f"{SWEEP}-{k}"]["timesteps"] < 300, seen
        assert "at 150 timesteps, below the top 1/2 (2 combinations" in trials[f"{SWEEP}-{k}"]["detail"], seen
        assert list((mount / SWEEP / f"{SWEEP}-{k}" / "checkpoints").glob("*/COMPLETE"))  # kept where it stopped
    for k in good:
        assert trials[f"{SWEEP}-{k}"]["timesteps"] == BUDGET
        steps = _steps(mount, f"{SWEEP}-{k}")
        assert steps == sorted(steps) and len(set(steps)) == len(steps) and 300 < steps[-1] <= BUDGET  # one curve
    spent = sum(trial["timesteps"] for trial in trials.values())
    assert spent <= 0.75 * 4 * BUDGET, trials  # the full grid is 2,400
    if hopeless_first:  # the unfavourable order: a hopeless trial at the first rung is never judged alone
        judged = _first_rung_judgements(logs, {f"{SWEEP}-{k}" for k in hopeless})
        assert set(judged) == {f"{SWEEP}-{k}" for k in hopeless}, _tails(logs)
        assert all(line.startswith(("waiting at rung 150", "pruned:")) for line in judged.values()), judged
        assert all("(2 combinations" in line for line in judged.values() if line.startswith("pruned:")), judged
    code, stdout, stderr = invoke("experiment", "list", "-s", SWEEP, "--json")
    assert code == 0, stderr
    rows = [(row["pruned"], row["best"]) for row in json.loads(stdout)]
    assert rows == ([(2, False), (0, True)] if hopeless_first else [(0, True), (2, False)])


def test_a_worker_killed_mid_trial_loses_its_lease_and_another_finishes_the_trial_exactly(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = early_stop_sweep(SWEEP).replace("saver_frequency: 10000t", "saver_frequency: 200t")
    _deploy(lab, gcs, text, monkeypatch)
    mount = tmp_path / "mount"
    victim = f"{SWEEP}-0"
    sweep = PlayedSweep(fake_pulumi.state, SWEEP, gcs.bucket(BUCKET), api, {}, mount=mount, env=FAST, oom_trial=victim)
    logs = _play(sweep, mount)
    assert sweep.killed_worker, _tails(logs)  # its worker was killed once the trial had a checkpoint
    assert any(pod.attempt > 0 for pod in sweep.controller.pods) if sweep.controller else False  # a new pod

    trials = _status()
    assert trials[victim]["state"] == "completed" and trials[victim]["timesteps"] == BUDGET
    steps = _steps(mount, victim)
    assert steps == sorted(steps) and len(set(steps)) == len(steps) and 300 < steps[-1] <= BUDGET  # resumed exactly
    claim = json.loads(gcs.bucket(BUCKET).blob(f"{claims_folder(SWEEP, 0)}/{victim}.json").download_as_text())
    assert claim["ended"] == "completed"

    # `logs -e <trial>`: the trial's sections of both workers' logs (the killed one's and the one that resumed it)
    assert sweep.controller is not None
    for pod in sweep.controller.pods:
        log = mount / f"worker-{pod.index}-{pod.attempt}.log"
        api.logs[sweep.controller.pod_name(pod)] = log.read_text().splitlines(keepends=True) if log.exists() else []
    code, stdout, stderr = invoke("experiment", "logs", "-e", victim)
    assert code == 0, stderr
    assert stdout.count(start_line(victim)) >= 2 and stdout.count(end_line(victim, 0)) == 1, stdout
    assert "resuming from checkpoint" in stdout  # the second worker's trainer, in the trial's own log
    assert not any(start_line(f"{SWEEP}-{k}") in stdout for k in (1, 2, 3)), stdout  # only its own sections
    code, tail, stderr = invoke("experiment", "logs", "-e", victim, "--tail", "2")
    assert code == 0 and tail.splitlines() == stdout.splitlines()[-2:], stderr


def test_status_shows_a_trial_waiting_at_a_rung_on_gke(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28 item 5 on GKE: the bucket's ``result.json`` of a trial given back at a rung reads ``waiting``."""
    _deploy(lab, gcs, early_stop_sweep(SWEEP), monkeypatch)
    reason = "waiting at rung 150 timesteps for 1 more combination (1 of 2 there)"
    counts = {"timesteps": 152, "episodes": 9, "wall_seconds": 2.0, "timesteps_per_second": 76.0, "updates": 4}
    result = {"status": "paused", **counts, "mean_return_last_100": 16.9, "reason": reason}
    gcs.bucket(BUCKET).blob(f"{SWEEP}/{SWEEP}-0/result.json").upload_from_string(json.dumps(result))
    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP, "--json")
    assert code == 0, stderr
    trials = {t["trial"]: t for t in json.loads(stdout)["trials"]}
    assert trials[f"{SWEEP}-0"]["state"] == "waiting"
    assert reason in trials[f"{SWEEP}-0"]["detail"]
    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP)
    assert code == 0 and "waiting" in stdout, stdout + stderr


def _worker_pod(name: str, phase: str, created: str) -> dict[str, Any]:
    """A worker pod of the sweep's Job as the API server lists it (the labels infra/sweep_manifests.py gives)."""
    labels = {"app.kubernetes.io/instance": SWEEP, "app.kubernetes.io/component": "trial"}
    return {
        "metadata": {"name": name, "namespace": f"tfcli-{SWEEP}", "labels": labels, "creationTimestamp": created},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "trial"}]},
        "status": {"phase": phase},
    }


def test_logs_follow_a_trial_into_the_worker_that_trains_it_now(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trial 0 waited at a rung in one worker (ended there, exit 143) and trains now in another, after trial 1: `logs
    -f` gives both of its sections once each (the API server sends a followed log from its start again), none of
    trial 1's; a trial no worker has started is an error that says where to look."""
    _deploy(lab, gcs, early_stop_sweep(SWEEP), monkeypatch)
    zero, one = f"{SWEEP}-0", f"{SWEEP}-1"
    api.add_namespace(
        f"tfcli-{SWEEP}",
        pods=[
            _worker_pod("w-1-00000", "Running", "2026-11-26T10:05:00Z"),
            _worker_pod("w-0-00000", "Succeeded", "2026-11-26T10:00:00Z"),
            _worker_pod("w-2-00000", "Pending", "2026-11-26T10:09:00Z"),
        ],
    )
    first = [start_line(zero), "episode 1 of trial 0", "waiting at rung 150", end_line(zero, 143), "worker done"]
    now = [start_line(one), "episode 1 of trial 1", end_line(one, 0), start_line(zero), "resuming from checkpoint 1"]
    api.logs = {
        "w-0-00000": [f"INFO {line}\n" for line in first],
        "w-1-00000": [f"INFO {line}\n" for line in [*now, "episode 9 of trial 0"]],
    }
    code, stdout, stderr = invoke("experiment", "logs", "-e", zero, "-f")
    assert code == 0, stderr
    mine = [first[0], first[1], first[2], first[3], now[3], now[4], "episode 9 of trial 0"]
    assert stdout == "".join(f"INFO {line}\n" for line in mine)
    followed = [path for path in api.requests if "follow=true" in path]
    assert len(followed) == 1 and "/pods/w-1-00000/log?" in followed[0], api.requests  # the worker training it

    code, stdout, stderr = invoke("experiment", "logs", "-e", one)
    assert code == 0 and stdout == "".join(f"INFO {line}\n" for line in now[:3]), stderr
    code, stdout, stderr = invoke("experiment", "logs", "-e", f"{SWEEP}-3")
    assert code == 1 and f"trial {SWEEP}-3 has not been trained by any of the sweep's workers yet" in stderr
    assert f"tfcli experiment status -e {SWEEP}-3" in stderr
